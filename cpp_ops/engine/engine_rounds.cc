// Engine, part 2: rounds and published values (DESIGN.md §3).
#include <algorithm>
#include <cstring>

#include "engine.h"
#include "message_tags.h"

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

bool Engine::IsSoloRound(const Stream& s, int64_t round) const {
  const RoundPlan plan = PlanRound(round, s.spec.config.sync_period, s.schedule->num_phases());
  return !plan.global && s.schedule->GroupOf(plan.phase, s.my_index).size() == 1;
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
  int64_t round = first;
  if (s.spec.config.wait_avoiding_global() && s.id >= 0) {
    // A lagging app skips the rounds its engine already served while it computed: the
    // contiguous run of them from `first` on. (Never past a round this rank has not
    // joined: its group would wait for it there.) Rounds where this rank's group is
    // itself alone (P not a power of S) hold nobody up and would return the app's own
    // input, so the run passes over them; without that, a slow rank with such rounds
    // could never skip (measured: a 4x slower host at P=6, S=2 lagged until
    // max_staleness made every global round wait for it). Passing one is taken only
    // when at least two served rounds lie beyond `first`: a peer one round ahead in
    // lockstep must not make an app skip.
    int64_t last_served = first - 1;
    int served = 0;
    bool passed_solo = false, failed = false;
    int64_t newest = first;  // no round beyond the newest this engine holds was served
    if (!s.rounds.empty()) newest = std::max(newest, s.rounds.rbegin()->first);
    if (!s.dropped.empty()) newest = std::max(newest, *s.dropped.rbegin());
    for (int64_t r = first; r <= newest; ++r) {
      if (!s.ServedPassively(r)) {
        if (!IsSoloRound(s, r)) break;
        passed_solo = true;
        continue;
      }
      last_served = r;
      ++served;
      auto it = s.rounds.find(r);
      failed = it != s.rounds.end() && !it->second.error.empty();
      if (failed) break;  // the app must hear that error, not skip it
    }
    if (passed_solo && served < 2 && !failed) last_served = first - 1;
    // Enter the next round with the fresh input when a peer already waits there, or
    // when the newest served round's result was not kept (a newer one replaced it).
    const bool kept = last_served < first || s.rounds.count(last_served) > 0;
    if (!failed && (s.activations.count(last_served + 1) || !kept)) {
      round = last_served + 1;
    } else {
      round = std::max(first, last_served);  // the newest served round's result
    }
    for (int64_t r = first; r < round; ++r) {
      auto it = s.rounds.find(r);
      // In flight ones are dropped when they complete (they are below next_app_round).
      if (it != s.rounds.end() && it->second.completed) s.Drop(r);
    }
    if (round > first) {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stream_stats_[s.spec.name].rounds_skipped += round - first;
    }
  }
  s.next_app_round = round + 1;
  s.last_app_round = round;
  return round;
}

void Engine::EnterRound(Stream& s, RoundState& rs) {
  Publish(s, rs.call->input, 2 * rs.round, /*copy=*/false);
  if (rs.completed) {
    FinishAppRound(s, rs.round);
  } else if (!rs.joined) {
    const StreamConfig& config = s.spec.config;
    bool activate = rs.plan.global
                        ? config.wait_avoiding_global() && rs.round > 0  // round 0 validates
                        : config.wait_avoiding;
    // Whoever activated this round activated every member: no second round of messages.
    if (config.wait_avoiding_global() && s.activations.erase(rs.round) > 0) activate = false;
    JoinRound(s, rs, rs.call->input, activate);
  }
}

bool Engine::StaleInRounds(const Stream& s, int64_t round) const {
  // A rank that joined (or is leaving) serves its final model: it has no app whose
  // progress the bound is about, so its value always counts.
  if (!s.spec.config.wait_avoiding_global() || self_joined_ || leaving_) return false;
  // Never wait for the app instead (DESIGN §3, corrected): that app may itself wait in
  // a Horovod collective for a rank that waits in this round.
  return round - s.last_app_round > s.spec.config.max_staleness;
}

void Engine::JoinPassively(Stream& s, int64_t round) {
  RoundState& rs = GetRound(s, round);
  const std::string missing = roster_.MissingPeer(s.id, s.spec.name, round, rs.members);
  if (!missing.empty()) {
    FailRound(s, round, missing);
    return;
  }
  rs.passive = true;
  rs.stale_in_rounds = StaleInRounds(s, round);
  rs.age_rounds = round - s.last_app_round;
  rs.passive_contribution = pool_.Copy(s.published, s.spec.num_bytes());
  JoinRound(s, rs, rs.passive_contribution.data(), /*activate=*/false);
  // The published value belongs to round published_version / 2 (its input or
  // output); an output of round r - 1 is fresh (0 rounds stale).
  const int64_t staleness = std::max<int64_t>(0, round - 1 - s.published_version / 2);
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.passive_joins;
    stats_.staleness_sum += staleness;
    stats_.staleness_max = std::max(stats_.staleness_max, staleness);
    StreamStats& st = stream_stats_[s.spec.name];
    ++st.passive_joins;
    st.staleness_sum += staleness;
    st.staleness_max = std::max(st.staleness_max, staleness);
  }
  if (timeline_.enabled()) {
    timeline_.Instant(Timeline::kEngine, "join", "passive_join", rs.joined_at_us,
                      "\"stream\":\"" + JsonEscape(s.spec.name) + "\",\"round\":" +
                          std::to_string(round) + ",\"staleness\":" +
                          std::to_string(staleness) + ",\"age\":" +
                          std::to_string(rs.age_rounds) + ",\"stale_in_rounds\":" +
                          (rs.stale_in_rounds ? "true" : "false"));
  }
}

void Engine::CountPassiveContribution(Stream& s, const RoundState& rs) {
  // Decided by every member alike once the inclusion messages were exchanged.
  const bool wa_global = s.spec.config.wait_avoiding_global();
  const bool left_out = wa_global && !rs.self_included;
  // Its age in the sense of max_staleness: rounds since the app last entered, or (with
  // inclusion shared) the steps its app is behind the round's most advanced member,
  // whichever is smaller.
  const int64_t age = wa_global ? std::min(rs.age_rounds, rs.steps_behind) : rs.age_rounds;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    StreamStats& st = stream_stats_[s.spec.name];
    if (left_out) {
      ++st.rounds_left_out;
      ++stats_.rounds_left_out;
    } else {
      if (rs.stale_in_rounds) ++st.rounds_kept_ahead;
      if (!self_joined_) ++st.age_histogram[age];  // a joined rank's final model has no age
    }
  }
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
    if (m != rank_ && (activate || roster_.joined(m))) targets.push_back(m);
  }
  if (!targets.empty()) {
    uint64_t fingerprint = s.fingerprint;
    const std::string payload(reinterpret_cast<const char*>(&fingerprint), sizeof(fingerprint));
    for (int m : targets) SendControl(m, ControlKind::kActivate, s.id, rs.round, payload);
    rs.activated_all = activate;
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.activations_sent += static_cast<int64_t>(targets.size());
      stream_stats_[s.spec.name].activations_sent += static_cast<int64_t>(targets.size());
    }
    if (timeline_.enabled()) {
      std::string to;
      for (int m : targets) to += (to.empty() ? "" : ",") + std::to_string(m);
      timeline_.Instant(Timeline::kEngine, "activation", "activation_sent", rs.joined_at_us,
                        "\"stream\":\"" + JsonEscape(s.spec.name) + "\",\"round\":" +
                            std::to_string(rs.round) + ",\"to\":[" + to + "]");
    }
  } else {
    rs.activated_all = activate;
  }
  ReductionArgs args;
  args.comm = data_comm_;
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
  rs.mean_in_output = rs.call && contribution == rs.call->input &&
                      (rs.plan.global || s.spec.config.averaging != Averaging::kPaper) &&
                      !(passive_joins && rs.call->output == rs.call->input);
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
  rs.reduction = MakeGroupReduction(std::move(args), thresholds_);
  rs.reduction->Start();
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    const int64_t sent = static_cast<int64_t>(rs.reduction->BytesSent());
    stats_.bytes_sent += sent;
    stream_stats_[s.spec.name].bytes_sent += sent;
  }
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
  // "local" keeps x - base, the app's progress since its engine took c without the
  // results applied since (below). That forgets those results' corrections, which is
  // harmless for one (a faster partner activated this round just before the app
  // entered the previous one: the common case under random imbalance) but not for a
  // run: after a Horovod collective that a persistently slow rank reached late, the
  // others' apps collect a long run of rounds their engines joined with the value
  // parked there (they cannot skip them: rounds in between, without the slow rank,
  // were not joined), and each reset their model to that value's mean plus all their
  // steps since. In tests/workers/drift_consensus.py (P=8, a 2x slower rank, an
  // allreduce every 100 steps) fast ranks' |w_i| peaked at 15-39 where no rank's own
  // data pulls beyond 8. Past one result, such a round takes the fresh rule, a convex
  // combination of x and the others' values, which cannot run off. (Fresh for every
  // such round measured slower under random imbalance: progress divided by g.)
  Averaging rule = s.spec.config.averaging;
  if (rule == Averaging::kLocal && rs.results_since_join > 1) rule = Averaging::kFresh;
  // "local": later rounds joined passively took c before this round's output replaced
  // x in the app's model. Counting x - c as the app's own progress there would apply
  // this correction (output - x) a second time; repeated, that makes the ranks'
  // deviations from the mean grow instead of shrink. Their bases take it: base += out
  // - x, in two passes because out may be x's own buffer (in-place calls). x is intact
  // here whenever passive rounds exist: JoinRound keeps in-place calls off
  // mean_in_output in the modes that join passively (TensorFlow's separate output may
  // take the mean directly; its input stays x).
  std::vector<RoundState*> later;
  if (s.spec.config.averaging == Averaging::kLocal) later = LaterPassiveRounds(s, round);
  for (RoundState* r : later) {
    ++r->results_since_join;
    if (r->local_base.empty()) r->local_base = pool_.Copy(r->contribution, bytes);
    AddScaled(s.spec.dtype, x, -1, n, r->local_base.data());
  }
  if (rs.mean_in_output) {
    // already there
  } else if (rs.plan.global && (contributed_x || !s.spec.config.wait_avoiding_global())) {
    // The exact global mean. (Blocking global rounds always take the app's input; a
    // wait-avoiding one served passively applies the averaging rule below.)
    std::memcpy(out, rs.mean.data(), bytes);
  } else if (rule == Averaging::kPaper || (rule == Averaging::kFresh && !rs.self_included)) {
    // paper: (s + x) / (g + 1). fresh, left out: c is not in s, so replacing it by x
    // adds x as one more member: the same formula.
    PaperAverage(s.spec.dtype, rs.mean.data(), x, g, n, out);
  } else if (contributed_x) {
    std::memcpy(out, rs.mean.data(), bytes);  // c == x: the plain group mean
  } else {
    // fresh: m + (x - c) / g, which replaces c by x in the sum. local: m + (x - base),
    // left out or not: the member takes the mean and keeps its own progress since
    // the value its engine held, without the corrections it already applied since.
    const bool local = rule == Averaging::kLocal;
    const void* base = local && !rs.local_base.empty() ? rs.local_base.data() : rs.contribution;
    FreshCorrection(s.spec.dtype, rs.mean.data(), base, x, local ? 1 : g, n, out);
  }
  for (RoundState* r : later) AddScaled(s.spec.dtype, out, +1, n, r->local_base.data());
  // Published even without wait-avoidance: a rank that joins serves its final
  // model from here, and the app may reuse its input as soon as it has the output.
  Publish(s, out, 2 * round + 1, /*copy=*/true);
  const int64_t handle = call.handle;
  const bool global = rs.plan.global;
  const int64_t now_us = Timeline::NowUs();
  const int64_t call_us = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - call.enqueued).count();
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.call_wait_us += call_us;
    StreamStats& st = stream_stats_[s.spec.name];
    ++st.rounds;
    if (global) ++st.global_rounds;
    if (call.has_callback) (global ? st.global_wait_us : st.group_wait_us) += call_us;
  }
  if (timeline_.enabled()) {
    const std::string args = "\"round\":" + std::to_string(round);
    timeline_.Span(Timeline::kApp, "app", s.spec.name, call.enqueued_us, now_us,
                   args + ",\"kind\":\"" + (global ? "global" : "group") + "\"");
    if (call.has_callback)
      timeline_.Span(Timeline::kApp, "wait", s.spec.name, call.enqueued_us, now_us, args);
  }
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
