// Unit test of JoinSlot (request_queue.h): the one join() in progress. Its first
// outcome stands until the waiter takes it: a failed engine finishes the join with its
// error (under elastic, the membership verdict), then its loop's exit finishes it again
// with "shut down", which once replaced the verdict, so that a member lost during
// join() raised a plain WagmaError instead of WagmaMembershipChanged.
// Built and run by `make engine-unit-test` (and `make test`).
#include <string>

#include "check.h"
#include "core/request_queue.h"

namespace {

using wagma::JoinSlot;

const auto kStarts = [] { return std::string(); };

void TestWaitsUntilFinished() {
  JoinSlot slot;
  std::string error;
  CHECK_EQ(slot.Wait(0, &error, kStarts), -2);  // started, nobody finished it
  slot.Finish(3, "");
  CHECK_EQ(slot.Wait(0, &error, kStarts), 3);
  CHECK(error.empty());
}

void TestTheFirstErrorStands() {
  JoinSlot slot;
  std::string error;
  CHECK_EQ(slot.Wait(0, &error, kStarts), -2);
  slot.Finish(-1, "WAGMA engine error: membership changed: rank 2 was lost");
  slot.Finish(-1, "the WAGMA engine shut down before every rank joined");
  CHECK_EQ(slot.Wait(0, &error, kStarts), -1);
  CHECK(error == "WAGMA engine error: membership changed: rank 2 was lost");
}

void TestASuccessIsNotTurnedIntoAnError() {
  JoinSlot slot;
  std::string error;
  CHECK_EQ(slot.Wait(0, &error, kStarts), -2);
  slot.Finish(1, "");
  slot.Finish(-1, "the WAGMA engine shut down before every rank joined");
  CHECK_EQ(slot.Wait(0, &error, kStarts), 1);
  CHECK(error.empty());
}

void TestAStartErrorFailsTheCall() {
  JoinSlot slot;
  std::string error;
  CHECK_EQ(slot.Wait(0, &error, [] { return std::string("no engine"); }), -1);
  CHECK(error == "no engine");
  slot.Finish(2, "");  // no join in progress: nothing to finish
  error.clear();
  CHECK_EQ(slot.Wait(0, &error, kStarts), -2);  // a new join, not the old result
}

}  // namespace

int main() {
  TestWaitsUntilFinished();
  TestTheFirstErrorStands();
  TestASuccessIsNotTurnedIntoAnError();
  TestAStartErrorFailsTheCall();
  return Report("join_slot_test");
}
