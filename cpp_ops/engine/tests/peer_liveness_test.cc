// Unit test of liveness (peer_liveness.h, stall_monitor.h): a probed peer that stays
// silent for the grace is unresponsive, any message clears it, and silence while this
// engine's own loop did not run is not held against anyone; the stall inspector
// (stall_inspector.h) warns once the round has waited the window, then every window,
// and so does a pending round-0 registration (StallMonitor::RegistrationWarningDue).
// Built and run by `make engine-unit-test` (and `make test`).
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "health/peer_liveness.h"
#include "health/stall_monitor.h"

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

// A rank stopped (engine and all) from the moment a peer's app starts waiting: with
// the settings FromEnv derives from WAGMA_STALL_WARNING_S and WAGMA_STALL_TIMEOUT_S,
// the waiter's monitor, inspecting every 50 ms as the engine loop does, names it
// before the shorter deadline, so the warning and the timeout error carry its name.
double SecondsToVerdict(const char* warning, const char* timeout) {
  setenv("WAGMA_STALL_WARNING_S", warning, 1);
  if (timeout) {
    setenv("WAGMA_STALL_TIMEOUT_S", timeout, 1);
  } else {
    unsetenv("WAGMA_STALL_TIMEOUT_S");
  }
  const wagma::StallSettings settings = wagma::StallSettings::FromEnv();
  unsetenv("WAGMA_STALL_WARNING_S");
  unsetenv("WAGMA_STALL_TIMEOUT_S");
  wagma::StallMonitor monitor(settings, 0, 3);
  const Clock::time_point t0 = Clock::now();
  for (int tick = 0; tick <= 4000; ++tick) {  // up to 200 s
    const Clock::time_point t = t0 + milliseconds(50 * tick);
    if (!monitor.InspectionDue(t)) continue;
    const double waited = 0.05 * tick;
    for (int peer : monitor.ProbesDue(waited, false, {1, 2}, t)) {
      if (peer == 2) monitor.Heard(2, t + milliseconds(5));  // 2 answers
    }
    const std::vector<int> lost = monitor.Unresponsive({1, 2}, t + milliseconds(5));
    if (!lost.empty()) {
      CHECK((lost == std::vector<int>{1}));  // the live peer is never blamed
      return waited;
    }
  }
  return 1e9;
}

void TestStoppedRankNamedBeforeTheDeadline() {
  struct Case {
    const char* warning;
    const char* timeout;
    double deadline;
  };
  const Case cases[] = {{"60", nullptr, 60}, {"60", "5", 5},  {"2", "5", 2},
                        {"60", "3", 3},      {"60", "2", 2},  {"10", "30", 10},
                        {"4", nullptr, 4}};
  for (const Case& c : cases) {
    const double verdict = SecondsToVerdict(c.warning, c.timeout);
    if (!(verdict < c.deadline)) {
      std::fprintf(stderr, "warning %s timeout %s: stopped rank named after %.2f s, the "
                   "deadline is %.1f s\n", c.warning, c.timeout ? c.timeout : "off",
                   verdict, c.deadline);
    }
    CHECK(verdict < c.deadline);
  }
}

// faults.md, "A stuck rank": after WAGMA_STALL_WARNING_S of waiting in a round the
// inspector warns, and repeats while the stall lasts (stall_inspector.h: every window).
// The first waiting rank reports once its call has waited report_after_s, and that
// wait counts: the first warning comes when the round has waited the window (2 s here),
// not a window after the report, and each warning's waited_s is the round's wait.
void TestStallWarningAfterTheWindowOfWaitingThenEveryWindow() {
  using InspectorClock = wagma::StallInspector::Clock;
  wagma::StallSettings settings;
  settings.warning_s = 2.0;
  settings.report_after_s = 0.5;
  wagma::StallInspector inspector(settings);
  const InspectorClock::time_point t0 = InspectorClock::now();  // rank 1's call waits
  inspector.OnWaiting(7, 4, 1, t0 + milliseconds(500));   // its report, 0.5 s in
  inspector.OnWaiting(7, 4, 0, t0 + milliseconds(900));   // the inspector's own, later
  CHECK(inspector.Due(t0 + milliseconds(1900)).empty());
  std::vector<wagma::StallInspector::Stall> due = inspector.Due(t0 + milliseconds(2100));
  CHECK_EQ(due.size(), 1);
  if (due.size() == 1u) {
    CHECK(due[0].stream_id == 7 && due[0].round == 4);
    CHECK((due[0].waiting == std::set<int>{0, 1}));
    CHECK(std::fabs(due[0].waited_s - 2.1) < 1e-6);
  }
  CHECK(inspector.Due(t0 + milliseconds(4000)).empty());  // 1.9 s after the warning
  due = inspector.Due(t0 + milliseconds(4200));
  CHECK_EQ(due.size(), 1);
  if (due.size() == 1u) CHECK(std::fabs(due[0].waited_s - 4.2) < 1e-6);
  inspector.Forget(7, 4);  // the round completed on the inspector
  CHECK(inspector.Due(t0 + milliseconds(6500)).empty());
}

}  // namespace

// faults.md: a stalled round-0 registration is inspected as any stalled round: warned
// once it has waited the warning time, then again every warning time while it lasts,
// each pending registration on its own clock.
void TestRegistrationWarningRepeatsEveryWindow() {
  wagma::StallSettings settings;
  settings.warning_s = 2.0;
  wagma::StallMonitor monitor(settings, 0, 3);
  const Clock::time_point t0 = Clock::now();
  CHECK(!monitor.RegistrationWarningDue("w", 1.9, t0));
  CHECK(monitor.RegistrationWarningDue("w", 2.0, t0));
  CHECK(!monitor.RegistrationWarningDue("w", 3.0, t0 + milliseconds(1000)));
  CHECK(!monitor.RegistrationWarningDue("w", 3.9, t0 + milliseconds(1900)));
  CHECK(monitor.RegistrationWarningDue("w", 4.1, t0 + milliseconds(2100)));  // again
  CHECK(!monitor.RegistrationWarningDue("w", 5.0, t0 + milliseconds(3000)));
  CHECK(monitor.RegistrationWarningDue("w", 6.2, t0 + milliseconds(4200)));  // and again
  CHECK(monitor.RegistrationWarningDue("v", 2.5, t0 + milliseconds(3000)));  // its own
}

int main() {
  TestSilenceAfterAProbe();
  TestDiscountedSilence();
  TestMonitorDiscountsItsOwnPause();
  TestStoppedRankNamedBeforeTheDeadline();
  TestStallWarningAfterTheWindowOfWaitingThenEveryWindow();
  TestRegistrationWarningRepeatsEveryWindow();
  return Report("peer_liveness_test");
}
