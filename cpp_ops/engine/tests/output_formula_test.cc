// Unit test of what a round outputs (design.md 2.6): for every averaging rule, every
// case of a round (this rank's value counted or left out, its app's input or an older
// value, group or global, blocking or wait-avoiding global rounds, results applied
// since a passive join) and every dtype, the formula the rule picks (ChooseOutput,
// averaging_rule.h) run through its kernels (ApplyOutputFormula, data_type.h) gives
// the exact value of the formula written out by hand. Also the kernel the 'local'
// rule's bookkeeping uses, AddScaled. Built and run by `make engine-unit-test`.
#include <cstdio>
#include <vector>

#include "rounds/averaging_rule.h"
#include "rounds/output_formula.h"
#include "rounds/round_policy.h"
#include "check.h"
#include "typed_values.h"

using namespace wagma;
using typed::Get;
using typed::kAllTypes;
using typed::Put;

namespace {

// One round's operands at element i: the shift d = 4 (i % 3) moves every operand, and
// so every formula's value, by d. g = 3: s = g m.
constexpr int kG = 3;
constexpr double kM = 10, kC = 8, kX = 14, kBase = 11;
double Shift(size_t i) { return 4.0 * static_cast<double>(i % 3); }

// The formulas by hand, at d = 0 (design.md 2.6).
constexpr double kMean = kM;                               // m
constexpr double kPaper = (kG * kM + kX) / (kG + 1);       // (s + x) / (g + 1) = 11
constexpr double kFresh = kM + (kX - kC) / kG;             // m + (x - c) / g = 12
constexpr double kLocal = kM + (kX - kBase);               // m + (x - base) = 13
constexpr double kDelta = kX + (kM - kC);                  // x + (m - c) = 16
constexpr double kInput = kX;                              // x

struct Round {
  bool self_included = true;
  bool contributed_x = false;
  bool global = false;
  bool wait_avoiding_global = false;
  int results_since_join = 0;
};

// y[0..n) for `rule` and `round`, in `dtype`, as the engine computes it.
std::vector<double> Output(Averaging rule, const Round& round, DataType dtype, size_t n,
                           bool with_base) {
  const size_t es = ElementSize(dtype);
  std::vector<char> m(n * es), c(n * es), x(n * es), base(n * es), out(n * es);
  for (size_t i = 0; i < n; ++i) {
    Put(dtype, kM + Shift(i), m.data(), i);
    // c == x when this rank's own input went in.
    Put(dtype, (round.contributed_x ? kX : kC) + Shift(i), c.data(), i);
    Put(dtype, kX + Shift(i), x.data(), i);
    Put(dtype, kBase + Shift(i), base.data(), i);
  }
  OutputFacts facts;
  facts.global = round.global;
  facts.wait_avoiding_global = round.wait_avoiding_global;
  facts.self_included = round.self_included;
  facts.contributed_x = round.contributed_x;
  facts.rule = RuleForRound(rule, round.results_since_join);
  OutputOperands ops;
  ops.m = m.data();
  ops.c = c.data();
  ops.x = x.data();
  ops.base = with_base ? base.data() : nullptr;
  ops.g = kG;
  ApplyOutputFormula(ChooseOutput(facts), dtype, ops, n, out.data());
  std::vector<double> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = Get(dtype, out.data(), i);
  return y;
}

bool Is(const std::vector<double>& y, double at_zero) {
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] != at_zero + Shift(i)) {
      std::fprintf(stderr, "  element %zu: %g, expected %g\n", i, y[i], at_zero + Shift(i));
      return false;
    }
  return true;
}

// A group round for each rule, each case of this rank's value, each dtype.
void TestGroupRoundsEveryRuleAndDtype() {
  const Round own{true, true, false, false, 0};       // its input went in: c == x
  const Round older{true, false, false, false, 0};    // an older value went in
  const Round left_out{false, false, false, false, 0};
  const Round older_past_one{true, false, false, false, 2};  // results applied since: 2
  for (DataType d : kAllTypes) {
    const size_t n = 5;
    // fresh: m, m + (x - c)/g, (s + x)/(g + 1) when left out.
    CHECK(Is(Output(Averaging::kFresh, own, d, n, false), kMean));
    CHECK(Is(Output(Averaging::kFresh, older, d, n, false), kFresh));
    CHECK(Is(Output(Averaging::kFresh, left_out, d, n, false), kPaper));
    // paper: (s + x)/(g + 1) always (x counted again, even when it went in: s + x
    // with s = g m, m from c == x).
    CHECK(Is(Output(Averaging::kPaper, older, d, n, false), kPaper));
    CHECK(Is(Output(Averaging::kPaper, left_out, d, n, false), kPaper));
    // local: m + (x - base), base = c without results applied since; 'fresh' past one.
    CHECK(Is(Output(Averaging::kLocal, own, d, n, false), kMean));
    CHECK(Is(Output(Averaging::kLocal, older, d, n, true), kLocal));
    CHECK(Is(Output(Averaging::kLocal, older, d, n, false), kDelta));  // base = c
    CHECK(Is(Output(Averaging::kLocal, left_out, d, n, true), kLocal));
    CHECK(Is(Output(Averaging::kLocal, older_past_one, d, n, true), kFresh));
    // delta: x + (m - c); x when left out.
    CHECK(Is(Output(Averaging::kDelta, own, d, n, false), kMean));
    CHECK(Is(Output(Averaging::kDelta, older, d, n, false), kDelta));
    CHECK(Is(Output(Averaging::kDelta, left_out, d, n, false), kInput));
    // follow: 'fresh''s outputs in every case.
    CHECK(Is(Output(Averaging::kFollow, own, d, n, false), kMean));
    CHECK(Is(Output(Averaging::kFollow, older, d, n, false), kFresh));
    CHECK(Is(Output(Averaging::kFollow, left_out, d, n, false), kPaper));
    CHECK(Is(Output(Averaging::kFollow, older_past_one, d, n, false), kFresh));
  }
}

// Global rounds: the exact mean when they block or took x; a wait-avoiding global
// round served passively applies the rule.
void TestGlobalRounds() {
  for (const AveragingRule& rule : AveragingRules())
    for (DataType d : kAllTypes) {
      const Averaging a = rule.code;
      CHECK(Is(Output(a, {true, false, true, false, 0}, d, 4, false), kMean));  // blocking
      CHECK(Is(Output(a, {true, true, true, true, 0}, d, 4, false), kMean));    // took x
      // Served passively: the same as a group round with an older value.
      CHECK(Is(Output(a, {true, false, true, true, 0}, d, 4, true),
               Output(a, {true, false, false, false, 0}, d, 4, true)[0]));
    }
}

// kMeanAlreadyInOutput leaves the output as the reduction wrote it; kMean and kInput
// work in place (out is x's buffer).
void TestInPlaceAndAlreadyWritten() {
  for (DataType d : kAllTypes) {
    const size_t es = ElementSize(d), n = 3;
    std::vector<char> m(n * es), x(n * es);
    for (size_t i = 0; i < n; ++i) {
      Put(d, kM + Shift(i), m.data(), i);
      Put(d, kX + Shift(i), x.data(), i);
    }
    OutputOperands ops;
    ops.m = m.data();
    ops.c = x.data();
    ops.x = x.data();
    ops.g = kG;
    ApplyOutputFormula(OutputFormula::kMeanAlreadyInOutput, d, ops, n, x.data());
    CHECK(Get(d, x.data(), 2) == kX + Shift(2));
    ApplyOutputFormula(OutputFormula::kInput, d, ops, n, x.data());
    CHECK(Get(d, x.data(), 1) == kX + Shift(1));
    ApplyOutputFormula(OutputFormula::kPaper, d, ops, n, x.data());  // in place
    CHECK(Get(d, x.data(), 2) == kPaper + Shift(2));
    ApplyOutputFormula(OutputFormula::kMean, d, ops, n, x.data());
    CHECK(Get(d, x.data(), 0) == kM);
  }
}

// AddScaled, every dtype: acc += a and acc -= a ('local''s bookkeeping of the bases).
void TestAddScaled() {
  for (DataType d : kAllTypes) {
    const size_t es = ElementSize(d), n = 6;
    std::vector<char> a(n * es), acc(n * es);
    for (size_t i = 0; i < n; ++i) {
      Put(d, 3.0 + i, a.data(), i);
      Put(d, 100.0 - i, acc.data(), i);
    }
    AddScaled(d, a.data(), +1, n, acc.data());
    bool ok = true;
    for (size_t i = 0; i < n; ++i) ok = ok && Get(d, acc.data(), i) == 103.0;
    CHECK(ok);
    AddScaled(d, a.data(), -1, n, acc.data());
    AddScaled(d, a.data(), -1, n, acc.data());
    for (size_t i = 0; i < n; ++i) ok = ok && Get(d, acc.data(), i) == 97.0 - 2.0 * i;
    CHECK(ok);
  }
}

}  // namespace

int main() {
  TestGroupRoundsEveryRuleAndDtype();
  TestGlobalRounds();
  TestInPlaceAndAlreadyWritten();
  TestAddScaled();
  return Report("output_formula_test");
}
