// JoinCoordinator's generations: a rank's join notice that arrives after the join it
// belongs to has ended here is stale, one from the next join is held until this join
// ends. Over Gloo, with three ranks joining after every few blocking rounds, the
// registrar's "all joined" overtook a notice within 3-128 joins (3 of 3 runs)
// (tests/workers/uneven.py, repeated_joins); the stale notice marked the rank joined for
// good and its published data stood in for its contributions to blocking rounds.
#include "rounds/join_coordinator.h"

#include "check.h"

using wagma::JoinCoordinator;
using Notice = wagma::JoinCoordinator::Notice;

namespace {

void TestTallyAndGenerations() {
  JoinCoordinator joins;
  CHECK_EQ(joins.generation(), 0);
  CHECK(joins.Classify(0) == Notice::kCurrent);
  CHECK(!joins.Record(1, {{7, 4}}, 3));
  CHECK(joins.in_progress());
  CHECK(!joins.Record(1, {{7, 2}}, 3));  // a repeat counts once
  CHECK(!joins.Record(2, {{7, 9}, {8, 1}}, 3));
  // faults.md: training after join() goes on from the furthest round any rank
  // reached, not the last joiner's: rank 0 joins last, behind rank 2.
  CHECK(joins.Record(0, {{7, 3}}, 3));
  CHECK_EQ(joins.last_rank(), 0);
  CHECK_EQ(joins.last_rounds().at(7), 9);
  CHECK_EQ(joins.last_rounds().at(8), 1);
  joins.Reset();
  CHECK(!joins.in_progress());
  CHECK(joins.last_rounds().empty());
  CHECK_EQ(joins.generation(), 1);
}

void TestStaleAndEarlyNotices() {
  JoinCoordinator joins;
  joins.Reset();  // the first join has ended here
  CHECK(joins.Classify(0) == Notice::kStale);    // overtaken by its "all joined"
  CHECK(joins.Classify(1) == Notice::kCurrent);
  CHECK(joins.Classify(2) == Notice::kEarly);    // a rank already in the next join
  joins.Defer(2, "a");
  joins.Defer(1, "b");
  auto early = joins.TakeEarly();
  CHECK_EQ(early.size(), 2);
  CHECK_EQ(early[0].first, 2);
  CHECK(early[0].second == "a" && early[1].second == "b");  // in arrival order
  CHECK(joins.TakeEarly().empty());
  joins.Reset();
  CHECK(joins.Classify(2) == Notice::kCurrent);
}

}  // namespace

int main() {
  TestTallyAndGenerations();
  TestStaleAndEarlyNotices();
  return Report("join_coordinator_test");
}
