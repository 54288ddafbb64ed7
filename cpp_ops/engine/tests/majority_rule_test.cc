// Unit test of the majority rule (majority_rule.h): for every split of member sets of
// 1..10 ranks into two sides, exactly one side goes on; and the cases the elastic
// tests rely on. Built and run by `make engine-unit-test` (and `make test`).
#include <set>

#include "check.h"
#include "health/majority_rule.h"

namespace {

using wagma::MayGoOn;

void TestExactlyOneSideOfEverySplitGoesOn() {
  for (int size = 2; size <= 10; ++size) {
    for (int mask = 1; mask < (1 << size) - 1; ++mask) {  // both sides non-empty
      std::set<int> a, b;
      for (int r = 0; r < size; ++r) (mask >> r & 1 ? a : b).insert(r);
      // Side A sees B's ranks lost, and B sees A's.
      CHECK_EQ(MayGoOn(size, b) + MayGoOn(size, a), 1);
    }
  }
}

void TestCases() {
  CHECK(MayGoOn(4, {}));
  CHECK(MayGoOn(4, {3}));         // one rank killed: 3 of 4 go on
  CHECK(MayGoOn(4, {2, 3}));      // a host of two killed: the half with rank 0
  CHECK(!MayGoOn(4, {0, 1}));     // the other half is fenced
  CHECK(!MayGoOn(4, {1, 2, 3}));  // a lone survivor of four, even rank 0
  CHECK(MayGoOn(8, {6, 7}));      // a host of 4 x 2 lost: 6 of 8
  CHECK(MayGoOn(6, {4, 5}));      // then another: 4 of 6
  CHECK(!MayGoOn(8, {0, 1, 2, 3, 4}));
  CHECK(!MayGoOn(1, {0}));
}

// faults.md: peers silent for half the liveness window by the end of the settle
// window are counted with the losses; a peer heard from lately is not.
void TestBehindTheSameCutIsHalfTheLivenessWindow() {
  using wagma::BehindTheSameCut;
  CHECK(BehindTheSameCut(5.0, 10.0));
  CHECK(BehindTheSameCut(7.5, 10.0));
  CHECK(!BehindTheSameCut(4.9, 10.0));
  CHECK(!BehindTheSameCut(1.0, 10.0));  // a live peer, heard every probe interval
  CHECK(BehindTheSameCut(2.5, 5.0) && !BehindTheSameCut(2.4, 5.0));
}

}  // namespace

int main() {
  TestExactlyOneSideOfEverySplitGoesOn();
  TestCases();
  TestBehindTheSameCutIsHalfTheLivenessWindow();
  return Report("majority_rule_test");
}
