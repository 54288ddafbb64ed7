// Unit test of liveness (peer_liveness.h, stall_monitor.h): a probed peer that stays
// silent for the grace is unresponsive, any message clears it, and silence while this
// engine's own loop did not run is not held against anyone. Built and run by `make
// engine-unit-test` (and `make test`).
#include <chrono>
#include <vector>

#include "check.h"
#include "../peer_liveness.h"
#include "../stall_monitor.h"

namespace {

using Clock = wagma::PeerLiveness::Clock;
using std::chrono::milliseconds;

void TestSilenceAfterAProbe() {
  wagma::PeerLiveness live(0, 3);
  const Clock::time_point t0 = Clock::now();
  CHECK((live.ProbeDue({1, 2}, t0, 1.0) == std::vector<int>{1, 2}));
  CHECK(live.ProbeDue({1, 2}, t0 + milliseconds(500), 1.0).empty());  // probed lately
  live.Heard(2, t0 + milliseconds(100));
  double silent = 0;
  CHECK(live.Unresponsive({1, 2}, t0 + milliseconds(2900), 3.0, &silent).empty());
  CHECK((live.Unresponsive({1, 2}, t0 + milliseconds(3000), 3.0, &silent) ==
         std::vector<int>{1}));
  CHECK(silent >= 3.0 && silent < 3.01);
}

void TestDiscountedSilence() {
  wagma::PeerLiveness live(0, 2);
  const Clock::time_point t0 = Clock::now();
  live.ProbeDue({1}, t0, 1.0);
  live.Discount(milliseconds(2500));  // this engine did not listen for 2.5 s
  double silent = 0;
  CHECK(live.Unresponsive({1}, t0 + milliseconds(5000), 3.0, &silent).empty());
  CHECK((live.Unresponsive({1}, t0 + milliseconds(5500), 3.0, &silent) ==
         std::vector<int>{1}));
}

// The monitor discounts a gap between inspections longer than kListenGap, and only
// such a gap.
void TestMonitorDiscountsItsOwnPause() {
  wagma::StallSettings settings;
  settings.probe_after_s = 1.0;
  settings.probe_grace_s = 3.0;
  wagma::StallMonitor monitor(settings, 0, 2);
  const Clock::time_point t0 = Clock::now();
  CHECK(monitor.InspectionDue(t0));
  CHECK((monitor.ProbesDue(0, true, {1}, t0) == std::vector<int>{1}));
  Clock::time_point t = t0;
  for (int i = 0; i < 59; ++i) {  // 2.95 s of inspections 50 ms apart: no discount
    t += milliseconds(50);
    CHECK(monitor.InspectionDue(t));
  }
  t += milliseconds(3000);  // the loop stalls 3 s, then runs again
  CHECK(monitor.InspectionDue(t));
  CHECK(monitor.Unresponsive({1}, t).empty());
  t += milliseconds(100);
  CHECK((monitor.Unresponsive({1}, t) == std::vector<int>{1}));  // 3.05 s listened
}

}  // namespace

int main() {
  TestSilenceAfterAProbe();
  TestDiscountedSilence();
  TestMonitorDiscountsItsOwnPause();
  return Report("peer_liveness_test");
}
