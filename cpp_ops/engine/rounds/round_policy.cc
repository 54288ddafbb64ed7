#include "rounds/round_policy.h"

#include <algorithm>

namespace wagma {

int64_t PublishedStaleness(int64_t round, int64_t published_version) {
  return std::max<int64_t>(0, round - 1 - published_version / 2);
}

ActivationAction OnActivation(bool joined, bool beyond_goodbye, bool earlier_in_flight) {
  if (joined || beyond_goodbye) return ActivationAction::kDiscard;
  // These waits are on communication only and point to lower round numbers, so they
  // cannot form a cycle.
  if (earlier_in_flight) return ActivationAction::kWait;
  return ActivationAction::kJoin;
}

bool JoinOnHoldQuery(bool self_joined, bool round_joined, bool activation_held, bool failed) {
  return self_joined && !round_joined && !activation_held && !failed;
}

bool ServedPassively(const StreamView& s, int64_t round) {
  StreamView::Held h;
  if (s.Find(round, &h)) return h.joined && !h.app_entered;
  return s.Dropped(round);
}

AppRoundChoice ChooseAppRound(const StreamView& s, bool wait_avoiding_global, bool assigned) {
  const int64_t first = s.next_app_round();
  AppRoundChoice choice;
  choice.round = first;
  if (!wait_avoiding_global || !assigned) return choice;
  // A lagging app skips the rounds its engine already served while it computed: the
  // contiguous run of them from `first` on. (Never past a round this rank has not
  // joined: its group would wait for it there.) Rounds where this rank's group is
  // itself alone hold nobody up and would return the app's own input, so the run
  // passes over them; without that, a slow rank with such rounds could never skip
  // (measured: a 4x slower host at P=6, S=2 lagged until max_staleness made every
  // global round wait for it). Passing one is taken only when at least two served
  // rounds lie beyond `first`: a peer one round ahead in lockstep must not make an
  // app skip.
  int64_t last_served = first - 1;
  int served = 0;
  bool passed_solo = false, failed = false;
  // No round beyond the newest this engine holds or dropped was served.
  const int64_t newest = std::max(first, s.NewestRound());
  for (int64_t r = first; r <= newest; ++r) {
    if (!ServedPassively(s, r)) {
      if (!s.Solo(r)) break;
      passed_solo = true;
      continue;
    }
    last_served = r;
    ++served;
    StreamView::Held h;
    failed = s.Find(r, &h) && h.failed;
    if (failed) break;  // the app must hear that error, not skip it
  }
  if (passed_solo && served < 2 && !failed) last_served = first - 1;
  // Enter the next round with the fresh input when a peer already waits there, or
  // when the newest served round's result was not kept (a newer one replaced it).
  StreamView::Held h;
  const bool kept = last_served < first || s.Find(last_served, &h);
  if (!failed && (s.Activated(last_served + 1) || !kept)) {
    choice.round = last_served + 1;
  } else {
    choice.round = std::max(first, last_served);  // the newest served round's result
  }
  choice.skipped = choice.round - first;
  return choice;
}

bool StaleInRounds(bool wait_avoiding_global, bool serves_final_model, int64_t round,
                   int64_t last_app_round, int64_t max_staleness) {
  if (!wait_avoiding_global || serves_final_model) return false;
  // Never wait for the app instead (docs/design.md, section 2.8): that app may itself
  // wait in a Horovod collective for a rank that waits in this round.
  return round - last_app_round > max_staleness;
}

int64_t EncodeInclusion(int64_t steps, bool stale_in_rounds) {
  return stale_in_rounds ? -steps - 1 : steps;
}

int64_t StepsOfInclusion(int64_t code) { return code < 0 ? -code - 1 : code; }

Inclusion DecideInclusion(const std::vector<int64_t>& codes, int64_t max_staleness) {
  Inclusion out;
  for (int64_t code : codes) out.most_steps = std::max(out.most_steps, StepsOfInclusion(code));
  // Old in rounds alone is not enough: an app that waits (in a Horovod collective,
  // say) while one lagging rank drives the rounds holds a value old in rounds, yet
  // ahead in training. Leaving it out would leave the lagging rank averaging alone.
  out.included.reserve(codes.size());
  for (int64_t code : codes) {
    const bool in = code >= 0 || out.most_steps - StepsOfInclusion(code) <= max_staleness;
    out.included.push_back(in);
    out.count += in ? 1 : 0;
  }
  return out;
}

int64_t ContributionAge(bool wait_avoiding_global, int64_t age_rounds, int64_t steps_behind) {
  return wait_avoiding_global ? std::min(age_rounds, steps_behind) : age_rounds;
}

CompletedRoundFate FateOfCompletedRound(bool app_entered, bool self_joined, int64_t round,
                                        int64_t next_app_round, bool wait_avoiding_global,
                                        bool failed) {
  if (app_entered) return CompletedRoundFate::kFinishApp;
  // This rank joined, or its app skipped past the round: the published value stays
  // the final model.
  if (self_joined || round < next_app_round) return CompletedRoundFate::kDrop;
  // A lagging app takes only the newest served round's result.
  if (wait_avoiding_global && !failed) return CompletedRoundFate::kSupersedeOlder;
  return CompletedRoundFate::kHold;
}

std::vector<int64_t> SupersededRounds(const StreamView& s, int64_t round) {
  // Only those the app will skip: every round between them and this one was served
  // too.
  int64_t r = round - 1;
  while (r >= s.next_app_round() && ServedPassively(s, r)) --r;
  std::vector<int64_t> out;
  for (int64_t q = r + 1; q < round; ++q) {
    StreamView::Held h;
    if (s.Find(q, &h) && !h.app_entered && h.completed && !h.failed) out.push_back(q);
  }
  return out;
}

int64_t ForgetDroppedBelow(int64_t next_app_round, int64_t newest_dropped, bool app_done,
                           int64_t keep) {
  return app_done ? newest_dropped - keep : next_app_round;
}

Averaging RuleForRound(Averaging configured, int results_since_join) {
  return RuleOf(configured).round_rule(results_since_join);
}

bool PublishServedResult(Averaging configured, bool passive, bool final_model, bool failed) {
  // A rank that joined (or is leaving) serves its final model: join()'s promise.
  return RuleOf(configured).publishes_served_result && passive && !final_model && !failed;
}

OutputFormula ChooseOutput(const OutputFacts& f) {
  if (f.mean_in_output) return OutputFormula::kMeanAlreadyInOutput;
  // The exact global mean. (Blocking global rounds always take the app's input; a
  // wait-avoiding one served passively applies the averaging rule.)
  if (f.global && (f.contributed_x || !f.wait_avoiding_global)) return OutputFormula::kMean;
  return RuleOf(f.rule).output(f.self_included, f.contributed_x);
}

bool ReduceIntoOutput(bool app_input_contributed, bool global, Averaging configured,
                      bool joins_passively, bool in_place) {
  return app_input_contributed && (global || RuleOf(configured).mean_when_input_went_in) &&
         !(joins_passively && in_place);
}

}  // namespace wagma
