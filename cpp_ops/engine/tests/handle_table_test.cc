// Unit test of HandleTable (handle_table.h): completion, and Close(), after which no
// loop completes anything, so every handle, pending or allocated later, must end with
// the closing error instead of waiting forever (a membership change once left an
// elastic job's survivors waiting on a handle enqueued after their engine failed).
// Built and run by `make engine-unit-test` (and `make test`).
#include <cstdint>
#include <string>

#include "check.h"
#include "core/handle_table.h"
#include "observe/timeline.h"

namespace {

using wagma::HandleTable;

void TestCompleteThenWait() {
  HandleTable t;
  const int64_t h = t.Allocate();
  CHECK_EQ(t.Poll(h), 0);
  t.Complete(h, "", "w", false, 7);
  HandleTable::Outcome out;
  CHECK_EQ(t.WaitFor(h, 0, &out), 1);
  CHECK(out.error.empty());
  CHECK_EQ(out.round, 7);
  CHECK_EQ(t.WaitFor(h, 0, &out), -1);  // forgotten once waited on
}

void TestCloseFailsPendingHandles() {
  HandleTable t;
  const int64_t h = t.Allocate();
  t.Close("engine error: lost");
  HandleTable::Outcome out;
  CHECK_EQ(t.WaitFor(h, 0, &out), 1);
  CHECK(out.error == "engine error: lost");
}

void TestHandlesAllocatedAfterCloseFailAtOnce() {
  HandleTable t;
  t.Close("engine error: lost");
  t.Close("shut down");  // the loop's exit closes again: the first error stays
  const int64_t h = t.Allocate();
  CHECK_EQ(t.Poll(h), 1);
  HandleTable::Outcome out;
  CHECK_EQ(t.WaitFor(h, 1000, &out), 1);  // not a timeout (0)
  CHECK(out.error == "engine error: lost");
  std::string seen = "not called";
  int64_t seen_round = 0;
  t.Allocate([&](const std::string& error, int64_t round) {
    seen = error;
    seen_round = round;
  });
  CHECK(seen == "engine error: lost");
  CHECK_EQ(seen_round, -1);
}

// faults.md / README: the timeline shows where the application waited. Bindings wait in
// slices (PyTorch: 100 ms) to return to their interpreter; a wait of several slices
// starts at its first slice, and its length is every slice's together.
void TestAWaitOfSeveralSlicesStartsAtItsFirst() {
  HandleTable t;
  const int64_t h = t.Allocate();
  HandleTable::Outcome out;
  const int64_t before = wagma::Timeline::NowUs();
  CHECK_EQ(t.WaitFor(h, 20000, &out), 0);  // a slice that times out
  const int64_t after_first = wagma::Timeline::NowUs();
  CHECK_EQ(t.WaitFor(h, 20000, &out), 0);
  t.Complete(h, "", "w", false, 3);
  CHECK_EQ(t.WaitFor(h, 20000, &out), 1);
  CHECK(out.first_wait_at_us >= before);
  CHECK(out.first_wait_at_us <= after_first);
  CHECK(out.waited_us >= 40000);  // both timed-out slices count
  CHECK_EQ(out.round, 3);
}

}  // namespace

int main() {
  TestCompleteThenWait();
  TestCloseFailsPendingHandles();
  TestAWaitOfSeveralSlicesStartsAtItsFirst();
  TestHandlesAllocatedAfterCloseFailAtOnce();
  return Report("handle_table_test");
}
