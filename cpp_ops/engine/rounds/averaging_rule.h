// AveragingRule: each averaging rule of docs/design.md 2.6 as one descriptor, the
// only place that says what a rule does. The round policy (round_policy.h) and the
// engine's round completion (engine_rounds.cc, engine.cc) ask the descriptor; Python's
// AVERAGING_RULES is read from this table through c_api.h. A new rule is a new entry
// in averaging_rule.cc, with its test.
//
// Notation, for one round as this rank sees it: x the app's input, c this rank's
// counted contribution (x itself, or the value its engine held when it joined the
// round passively), m the mean over the g contributions included, s = g m their sum,
// y the output the app gets.
//
// Invariants every rule keeps:
//  - a global round whose mean took x (or that blocked) outputs the exact mean m;
//  - y depends on x, c, m, g and the rule's own bookkeeping only, so every rank
//    computes its output alone, without another message;
//  - a rank serving its final model (join) never changes its published value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wagma {

// The wire code of a rule (StreamConfig::averaging, c_api's wagma_stream_config).
enum class Averaging : int32_t { kFresh = 0, kPaper = 1, kLocal = 2, kDelta = 3, kFollow = 4 };

// How a round's output y is made (the kernels of data_type.h compute them).
enum class OutputFormula {
  kMeanAlreadyInOutput,  // the reduction wrote m into the app's output
  kMean,                 // y = m (the exact mean, or c == x)
  kPaper,                // y = (s + x) / (g + 1)
  kFreshCorrection,      // y = m + (x - c) / g
  kLocalCorrection,      // y = m + (x - base)
  kContributionDelta,    // y = x + (m - c)
  kInput,                // y = x
};

struct AveragingRule {
  Averaging code;
  const char* name;
  // The rule whose output a round takes, given how many results the app applied
  // since this rank's engine took c (a passive join; 0 otherwise).
  Averaging (*round_rule)(int results_since_join);
  // The output of a round the exact mean does not answer (a group round, or a
  // wait-avoiding global round served passively): whether c went into m, whether c
  // equals x.
  OutputFormula (*output)(bool self_included, bool contributed_x);
  // Whether y = m whenever x itself went into m, so that the reduction may write m
  // straight into the app's output. False for 'paper', whose x counts twice.
  bool mean_when_input_went_in;
  // Bookkeeping beyond x, c and m:
  // 'local': a round joined passively keeps a base, c plus the corrections the app
  // applied since (y = m + (x - base)).
  bool keeps_base;
  // 'delta': the rounds a lagging app skips still move it: their m - c carries into
  // the output of the round it takes.
  bool carries_skipped_moves;
  // 'follow': a passive round's result becomes the published value, so the next
  // passive join contributes the group's consensus, not the app's old value.
  bool publishes_served_result;
};

// Every rule, in code order.
const std::vector<AveragingRule>& AveragingRules();
// The rule of `code`; nullptr for a code no rule has.
const AveragingRule* FindAveragingRule(Averaging code);
// The rule of a known code (a validated StreamConfig's).
const AveragingRule& RuleOf(Averaging code);
// "'fresh', 'paper', ... or 'follow'", for error messages.
std::string AveragingRuleNames();

}  // namespace wagma
