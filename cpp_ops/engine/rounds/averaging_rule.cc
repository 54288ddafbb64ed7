#include "rounds/averaging_rule.h"

#include <cstdlib>

namespace wagma {
namespace {

Averaging Fresh(int) { return Averaging::kFresh; }
Averaging Paper(int) { return Averaging::kPaper; }
Averaging Delta(int) { return Averaging::kDelta; }

// 'local' keeps x - base, the app's progress since its engine took c without the
// results applied since. That is harmless for one result (the common case under
// random imbalance) but not for a run: after a Horovod collective that a slow rank
// reached late, the others' apps collect a long run of rounds their engines joined
// with the value parked there, and each reset the model to that value's mean plus all
// steps since, so fast ranks' models ran off (tests/workers/drift_consensus.py). Past
// one result it takes 'fresh', a convex combination of x and the others' values that
// cannot run off.
Averaging Local(int results_since_join) {
  return results_since_join > 1 ? Averaging::kFresh : Averaging::kLocal;
}

// fresh: m + (x - c) / g replaces c by x in the sum. Left out, c is not in s, so
// replacing it by x adds x as one more member: 'paper''s formula.
OutputFormula FreshOutput(bool self_included, bool contributed_x) {
  if (!self_included) return OutputFormula::kPaper;
  return contributed_x ? OutputFormula::kMean : OutputFormula::kFreshCorrection;
}

// paper: (s + x) / (g + 1), x counted again beside its own contribution.
OutputFormula PaperOutput(bool, bool) { return OutputFormula::kPaper; }

// local: the member takes the mean and keeps its own progress since the value its
// engine held, without the corrections it already applied since: m + (x - base), left
// out or not.
OutputFormula LocalOutput(bool, bool contributed_x) {
  return contributed_x ? OutputFormula::kMean : OutputFormula::kLocalCorrection;
}

// delta: x moves by exactly what the mean took beyond this rank's contribution, so the
// members' moves sum to zero; a value left out took nothing.
OutputFormula DeltaOutput(bool self_included, bool contributed_x) {
  if (!self_included) return OutputFormula::kInput;
  return contributed_x ? OutputFormula::kMean : OutputFormula::kContributionDelta;
}

std::vector<AveragingRule> MakeRules() {
  // code, name, round_rule, output, mean_when_input_went_in, keeps_base,
  // carries_skipped_moves, publishes_served_result
  return {
      {Averaging::kFresh, "fresh", Fresh, FreshOutput, true, false, false, false},
      {Averaging::kPaper, "paper", Paper, PaperOutput, false, false, false, false},
      {Averaging::kLocal, "local", Local, LocalOutput, true, true, false, false},
      // For bookkeeping streams rather than models (drift correction's): summed over a
      // round's members the moves are exactly zero.
      {Averaging::kDelta, "delta", Delta, DeltaOutput, true, false, true, false},
      // 'fresh''s outputs; what differs is what its passive joins contribute: a late
      // member's engine contributes the newest result it served, not its app's old
      // model, whose weight would pull every round's mean back.
      {Averaging::kFollow, "follow", Fresh, FreshOutput, true, false, false, true},
  };
}

}  // namespace

const std::vector<AveragingRule>& AveragingRules() {
  static const std::vector<AveragingRule> rules = MakeRules();
  return rules;
}

const AveragingRule* FindAveragingRule(Averaging code) {
  for (const AveragingRule& rule : AveragingRules())
    if (rule.code == code) return &rule;
  return nullptr;
}

const AveragingRule& RuleOf(Averaging code) {
  const AveragingRule* rule = FindAveragingRule(code);
  // ValidateConfig (stream_spec.cc) refuses unknown codes before a stream exists.
  if (rule == nullptr) std::abort();
  return *rule;
}

std::string AveragingRuleNames() {
  const std::vector<AveragingRule>& rules = AveragingRules();
  std::string out;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (i > 0) out += i + 1 == rules.size() ? " or " : ", ";
    out += std::string("'") + rules[i].name + "'";
  }
  return out;
}

}  // namespace wagma
