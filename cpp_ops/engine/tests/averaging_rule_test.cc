// Unit test of the averaging rules' table (averaging_rule.h): its lookups, and that
// every descriptor is consistent with the invariants stated at the header's top.
// Each rule's formulas are checked against exact values in round_policy_test.cc
// (TestOutputFormula) and, on real ranks, tests/test_global_rounds.py. Built and run
// by `make engine-unit-test`.
#include <set>
#include <string>

#include "check.h"
#include "rounds/averaging_rule.h"

namespace {

using wagma::Averaging;
using wagma::AveragingRule;
using wagma::OutputFormula;

void TestCodesAndNamesAreUniqueAndInOrder() {
  std::set<std::string> names;
  int previous = -1;
  for (const AveragingRule& rule : wagma::AveragingRules()) {
    CHECK(names.insert(rule.name).second);
    CHECK(static_cast<int>(rule.code) > previous);  // code order, each code once
    previous = static_cast<int>(rule.code);
    CHECK(wagma::FindAveragingRule(rule.code) == &rule);
    CHECK(&wagma::RuleOf(rule.code) == &rule);
  }
  CHECK_EQ(names.size(), 5u);
  CHECK(wagma::FindAveragingRule(static_cast<Averaging>(99)) == nullptr);
  CHECK(wagma::FindAveragingRule(static_cast<Averaging>(-1)) == nullptr);
}

void TestTheWireCodes() {
  // Python, checkpoints and peers of another build send these numbers: they never move.
  CHECK(std::string(wagma::RuleOf(Averaging::kFresh).name) == "fresh");
  CHECK(std::string(wagma::RuleOf(Averaging::kPaper).name) == "paper");
  CHECK(std::string(wagma::RuleOf(Averaging::kLocal).name) == "local");
  CHECK(std::string(wagma::RuleOf(Averaging::kDelta).name) == "delta");
  CHECK(std::string(wagma::RuleOf(Averaging::kFollow).name) == "follow");
  CHECK_EQ(static_cast<int>(Averaging::kFollow), 4);
}

void TestNamesForErrors() {
  CHECK(wagma::AveragingRuleNames() ==
        "'fresh', 'paper', 'local', 'delta' or 'follow'");
}

void TestEveryRuleKeepsTheInvariants() {
  for (const AveragingRule& rule : wagma::AveragingRules()) {
    // x itself went into m: the plain mean exactly when the descriptor says so.
    const OutputFormula took_x = rule.output(/*self_included=*/true, /*contributed_x=*/true);
    CHECK((took_x == OutputFormula::kMean) == rule.mean_when_input_went_in);
    // A rule's round rule with nothing applied since keeps a rule of the table whose
    // own round rule is a fixed point (no chain of fallbacks).
    for (int since = 0; since < 4; ++since) {
      const Averaging used = rule.round_rule(since);
      CHECK(wagma::FindAveragingRule(used) != nullptr);
      CHECK(wagma::RuleOf(used).round_rule(since) == used);
    }
    // Only one kind of bookkeeping per rule: they read and write different state.
    CHECK(rule.keeps_base + rule.carries_skipped_moves + rule.publishes_served_result <= 1);
  }
}

void TestEachRulesOwnBehaviour() {
  using wagma::RuleOf;
  // fresh: (s + x) / (g + 1) when left out, m + (x - c) / g otherwise.
  CHECK(RuleOf(Averaging::kFresh).output(false, false) == OutputFormula::kPaper);
  CHECK(RuleOf(Averaging::kFresh).output(true, false) == OutputFormula::kFreshCorrection);
  // paper: always (s + x) / (g + 1).
  CHECK(RuleOf(Averaging::kPaper).output(true, true) == OutputFormula::kPaper);
  CHECK(RuleOf(Averaging::kPaper).output(false, false) == OutputFormula::kPaper);
  // local: m + (x - base), left out or not; 'fresh' past one result applied since.
  CHECK(RuleOf(Averaging::kLocal).output(false, false) == OutputFormula::kLocalCorrection);
  CHECK(RuleOf(Averaging::kLocal).output(true, false) == OutputFormula::kLocalCorrection);
  CHECK(RuleOf(Averaging::kLocal).round_rule(1) == Averaging::kLocal);
  CHECK(RuleOf(Averaging::kLocal).round_rule(2) == Averaging::kFresh);
  CHECK(RuleOf(Averaging::kLocal).keeps_base);
  // delta: x when left out, x + (m - c) otherwise; skipped rounds carry their moves.
  CHECK(RuleOf(Averaging::kDelta).output(false, false) == OutputFormula::kInput);
  CHECK(RuleOf(Averaging::kDelta).output(true, false) == OutputFormula::kContributionDelta);
  CHECK(RuleOf(Averaging::kDelta).carries_skipped_moves);
  // follow: 'fresh''s outputs at every round; publishes what it served.
  for (int since = 0; since < 4; ++since)
    CHECK(RuleOf(Averaging::kFollow).round_rule(since) == Averaging::kFresh);
  CHECK(RuleOf(Averaging::kFollow).publishes_served_result);
  CHECK(!RuleOf(Averaging::kFresh).publishes_served_result);
}

}  // namespace

int main() {
  TestCodesAndNamesAreUniqueAndInOrder();
  TestTheWireCodes();
  TestNamesForErrors();
  TestEveryRuleKeepsTheInvariants();
  TestEachRulesOwnBehaviour();
  return Report("averaging_rule_test");
}
