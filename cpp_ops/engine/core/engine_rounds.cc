// Engine, part 2: entering, joining and finishing rounds, and published values
// (docs/design.md, sections 2.4 to 2.8). The rules are round_policy.h's; this file
// gathers the facts, asks, and acts.
#include <algorithm>
#include <cstring>

#include "core/engine.h"
#include "transport/message_tags.h"
#include "rounds/output_formula.h"
#include "reduce/reduction_factory.h"

namespace wagma {

std::vector<int> Engine::MembersOf(const Stream& s, int64_t round, RoundPlan* plan) const {
  *plan = PlanRound(round, s.spec.config.sync_period, s.schedule->num_phases());
  if (plan->global) return s.spec.members;
  // The schedule is over positions in the process set; members are world ranks.
  std::vector<int> members;
  for (int index : s.schedule->GroupOf(plan->phase, s.my_index))
    members.push_back(s.spec.members[index]);
  return members;
}

RoundState& Engine::GetRound(Stream& s, int64_t round) {
  auto it = s.rounds.find(round);
  if (it != s.rounds.end()) return it->second;
  RoundState& rs = s.rounds[round];
  rs.round = round;
  rs.members = MembersOf(s, round, &rs.plan);
  for (size_t i = 0; i < rs.members.size(); ++i)
    if (rs.members[i] == rank_) rs.my_index = static_cast<int>(i);
  return rs;
}

int64_t Engine::TakeAppRound(Stream& s) {
  const int64_t first = s.next_app_round;
  const AppRoundChoice choice =
      ChooseAppRound(StreamRoundsView(s), s.spec.config.wait_avoiding_global(), s.id >= 0);
  for (int64_t r = first; r < choice.round; ++r) {
    auto it = s.rounds.find(r);
    // In flight ones are dropped when they complete (they are below next_app_round).
    if (it != s.rounds.end() && it->second.completed) DropSkippedRound(s, r);
  }
  if (choice.skipped > 0) metrics_.RoundsSkipped(s.spec.name, choice.skipped);
  s.next_app_round = choice.round + 1;
  s.last_app_round = choice.round;
  return choice.round;
}

void Engine::DropSkippedRound(Stream& s, int64_t round) {
  RoundState& rs = s.rounds.at(round);
  if (RuleOf(s.spec.config.averaging).carries_skipped_moves && rs.completed &&
      rs.error.empty() && rs.self_included && !joins_.self_joined()) {
    const size_t n = s.spec.num_elements();
    if (s.skipped_delta.empty()) {
      s.skipped_delta = pool_.Copy(rs.mean.data(), s.spec.num_bytes());
    } else {
      AddScaled(s.spec.dtype, rs.mean.data(), +1, n, s.skipped_delta.data());
    }
    AddScaled(s.spec.dtype, rs.contribution, -1, n, s.skipped_delta.data());
  }
  s.Drop(round, joins_.self_joined());
}

void Engine::EnterRound(Stream& s, RoundState& rs) {
  Publish(s, rs.call->input, InputVersion(rs.round), /*copy=*/false);
  if (rs.completed) {
    FinishAppRound(s, rs.round);
  } else if (!rs.joined) {
    const StreamConfig& config = s.spec.config;
    bool activate = rs.plan.global
                        ? config.wait_avoiding_global() && rs.round > 0  // round 0 validates
                        : config.wait_avoiding;
    // Whoever activated this round activated every member: no second round of messages
    // (the app may come while its engine holds the activation: grace_window.h).
    if (s.activations.erase(rs.round) > 0) activate = false;
    JoinRound(s, rs, rs.call->input, activate);
  }
}

void Engine::JoinPassively(Stream& s, int64_t round) {
  RoundState& rs = GetRound(s, round);
  const std::string missing = roster_.MissingPeer(s.id, s.spec.name, round, rs.members);
  if (!missing.empty()) {
    FailRound(s, round, missing);
    return;
  }
  rs.passive = true;
  const StreamConfig& config = s.spec.config;
  // A rank that joined (or is leaving) serves its final model: its value always counts.
  rs.final_model = joins_.self_joined() || leaving_;
  rs.stale_in_rounds = StaleInRounds(config.wait_avoiding_global(), rs.final_model, round,
                                     s.last_app_round, config.max_staleness);
  rs.age_rounds = round - s.last_app_round;
  rs.passive_contribution = pool_.Copy(s.published, s.spec.num_bytes());
  JoinRound(s, rs, rs.passive_contribution.data(), /*activate=*/false);
  // The published value belongs to round published_version / 2 (its input or
  // output); an output of round r - 1 is fresh (0 rounds stale).
  metrics_.PassiveJoin(s.spec.name, round, PublishedStaleness(round, s.published_version),
                       rs.age_rounds, rs.stale_in_rounds, rs.joined_at_us);
}

void Engine::CountPassiveContribution(Stream& s, const RoundState& rs) {
  // Decided by every member alike once the inclusion messages were exchanged.
  const bool wa_global = s.spec.config.wait_avoiding_global();
  const bool left_out = wa_global && !rs.self_included;
  // A final model has no age. Decided at the passive join: a join() that ended since
  // (every rank joined) once made a round served with the final model count its age in
  // rounds (20 against max_staleness 5, Gloo, 4 ranks, test_no_deadlock's wjoin:10).
  metrics_.PassiveContribution(s.spec.name, left_out, rs.stale_in_rounds, !rs.final_model,
                               ContributionAge(wa_global, rs.age_rounds, rs.steps_behind));
  if (left_out) {
    ++s.left_out_since_app_call;
    s.left_out_at = std::chrono::steady_clock::now();
  }
}

void Engine::JoinRound(Stream& s, RoundState& rs, const void* contribution, bool activate) {
  const std::string missing = roster_.MissingPeer(s.id, s.spec.name, rs.round, rs.members);
  if (!missing.empty()) {
    FailRound(s, rs.round, missing);
    return;
  }
  rs.joined = true;
  rs.joined_at_us = Timeline::NowUs();
  rs.contribution = contribution;
  s.last_joined_round = std::max(s.last_joined_round, rs.round);
  // Joined ranks only join what they are activated for, so they are activated for
  // every round, including those that otherwise activate nobody.
  std::vector<int> targets;
  for (int m : rs.members) {
    if (m == rank_) continue;
    if (activate || (roster_.joined(m) && !LoseActivationForTest())) targets.push_back(m);
  }
  if (!targets.empty()) {
    const std::string payload = PackFingerprint(s.fingerprint);
    for (int m : targets) SendControl(m, ControlKind::kActivate, s.id, rs.round, payload);
    metrics_.ActivationsSent(s.spec.name, rs.round, targets, rs.joined_at_us);
  }
  rs.activated_all = activate;
  ReductionArgs args;
  args.transport = transport_.get();
  args.tag = DataTag(s.id, rs.round);
  args.members = rs.members;
  args.my_index = rs.my_index;
  args.dtype = s.spec.dtype;
  args.count = s.spec.num_elements();
  args.contribution = contribution;
  // The app's own contribution under the plain mean (global rounds, or 'fresh' and
  // 'local' with c = x) makes m the answer: reduce straight into the output.
  // Not for in-place calls where the engine may join later rounds passively: those
  // copy the app's input (published by reference) while this round is in flight, and
  // the "local" rule needs x intact when this round finishes.
  const bool passive_joins = s.spec.config.wait_avoiding || s.spec.config.wait_avoiding_global();
  rs.mean_in_output = rs.call && ReduceIntoOutput(contribution == rs.call->input, rs.plan.global,
                                                  s.spec.config.averaging, passive_joins,
                                                  rs.call->output == rs.call->input);
  if (rs.mean_in_output) {
    args.result = rs.call->output;
  } else {
    rs.mean = pool_.Take(s.spec.num_bytes());
    args.result = rs.mean.data();
  }
  args.pool = &pool_;
  args.cut = &cut_;
  // Any member's value may be left out in this mode, so every round shares the flags.
  args.share_inclusion = s.spec.config.wait_avoiding_global();
  args.steps = s.app_calls;
  args.stale_in_rounds = rs.stale_in_rounds;
  args.max_staleness = s.spec.config.max_staleness;
  rs.reduction = MakeGroupReduction(std::move(args), settings_.thresholds);
  rs.reduction->Start();
  metrics_.ReductionStarted(s.spec.name, static_cast<int64_t>(rs.reduction->BytesSent()));
  ++in_flight_;
}

void Engine::FinishAppRound(Stream& s, int64_t round) {
  RoundState& rs = s.rounds.at(round);
  if (!rs.error.empty()) {
    const std::string error = rs.error;  // failed while passive: the app hears it now
    FailRound(s, round, error);
    return;
  }
  AppCall& call = *rs.call;
  const size_t n = s.spec.num_elements();
  const size_t bytes = s.spec.num_bytes();
  const int g = rs.included;  // the members whose contributions the mean m is over
  char* out = static_cast<char*>(call.output);
  const void* x = call.input;
  const bool contributed_x =
      rs.self_included &&
      (rs.contribution == x || std::memcmp(rs.contribution, x, bytes) == 0);
  // 'local' takes 'fresh' past one result applied since c was taken (averaging_rule.cc
  // says why).
  const Averaging rule = RuleForRound(s.spec.config.averaging, rs.results_since_join);
  // "local": later rounds joined passively took c before this round's output replaced
  // x in the app's model. Counting x - c as the app's own progress there would apply
  // this correction (output - x) a second time; repeated, that makes the ranks'
  // deviations from the mean grow instead of shrink. Their bases take it: base += out
  // - x, in two passes because out may be x's own buffer (in-place calls). x is intact
  // here whenever passive rounds exist: JoinRound keeps in-place calls off
  // mean_in_output in the modes that join passively (TensorFlow's separate output may
  // take the mean directly; its input stays x).
  std::vector<RoundState*> later;
  if (RuleOf(s.spec.config.averaging).keeps_base) later = LaterPassiveRounds(s, round);
  for (RoundState* r : later) {
    ++r->results_since_join;
    if (r->local_base.empty()) r->local_base = pool_.Copy(r->contribution, bytes);
    AddScaled(s.spec.dtype, x, -1, n, r->local_base.data());
  }
  OutputFacts facts;
  facts.mean_in_output = rs.mean_in_output;
  facts.global = rs.plan.global;
  facts.wait_avoiding_global = s.spec.config.wait_avoiding_global();
  facts.self_included = rs.self_included;
  facts.contributed_x = contributed_x;
  facts.rule = rule;
  OutputOperands ops;
  ops.m = rs.mean.data();
  ops.c = rs.contribution;
  ops.x = x;
  ops.base = rs.local_base.empty() ? nullptr : rs.local_base.data();
  ops.g = g;
  ApplyOutputFormula(ChooseOutput(facts), s.spec.dtype, ops, n, out);
  for (RoundState* r : later) AddScaled(s.spec.dtype, out, +1, n, r->local_base.data());
  if (!s.skipped_delta.empty()) {  // 'delta': the rounds the app skipped moved it too
    AddScaled(s.spec.dtype, s.skipped_delta.data(), +1, n, out);
    s.skipped_delta = Buffer();
  }
  // Published even without wait-avoidance: a rank that joins serves its final
  // model from here, and the app may reuse its input as soon as it has the output.
  Publish(s, out, OutputVersion(round), /*copy=*/true);
  const int64_t handle = call.handle;
  const bool global = rs.plan.global;
  const int64_t call_us = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - call.enqueued).count();
  metrics_.AppRoundDone(s.spec.name, round, global, call.has_callback, call.enqueued_us,
                        call_us);
  s.rounds.erase(round);
  handles_.Complete(handle, "", s.spec.name, global, round);
}

std::vector<RoundState*> Engine::LaterPassiveRounds(Stream& s, int64_t round) {
  std::vector<RoundState*> later;
  for (auto it = s.rounds.upper_bound(round); it != s.rounds.end(); ++it) {
    if (it->second.joined && it->second.passive) later.push_back(&it->second);
  }
  return later;
}

void Engine::Publish(Stream& s, const void* value, int64_t version, bool copy) {
  if (version <= s.published_version) return;
  s.published_version = version;
  if (!copy) {
    s.published = value;
    return;
  }
  if (s.published_copy.empty()) s.published_copy = pool_.Take(s.spec.num_bytes());
  if (s.published_copy.data() != value)
    std::memcpy(s.published_copy.data(), value, s.spec.num_bytes());
  s.published = s.published_copy.data();
}

void Engine::DetachPublished(Stream& s) {
  if (s.published == nullptr) return;
  if (!s.published_copy.empty() && s.published == s.published_copy.data()) return;
  if (s.published_copy.empty()) s.published_copy = pool_.Take(s.spec.num_bytes());
  std::memcpy(s.published_copy.data(), s.published, s.spec.num_bytes());
  s.published = s.published_copy.data();
}

}  // namespace wagma
