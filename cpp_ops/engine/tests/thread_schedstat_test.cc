// Unit test of the engine thread's scheduler accounting (thread_schedstat.h) and the
// loop pause the stall monitor reports with it (stall_monitor.h): a gap is called busy,
// starved or asleep by the largest of its three parts, the parts add up to the gap, and
// a real thread that slept through a loop pause is reported asleep. Built and run by
// `make engine-unit-test` (and `make test`).
#include <chrono>
#include <string>
#include <thread>

#include "check.h"
#include "health/stall_monitor.h"
#include "health/thread_schedstat.h"

namespace {

using wagma::SchedGapText;
using wagma::SchedTimes;

SchedTimes At(double run_s, double queued_s) {
  SchedTimes t;
  t.known = true;
  t.run_s = run_s;
  t.queued_s = queued_s;
  return t;
}

void TestVerdictIsTheLargestPart() {
  // The soak's hold (39.4 s): a thread that barely ran and waited for a CPU is starved.
  const std::string starved = SchedGapText(At(1.0, 1.0), At(1.1, 40.0), 39.4);
  CHECK(Contains(starved, "; of those 39.4 s the thread ran 0.1 s on a CPU, waited 39.0 s "
                          "runnable and slept 0.3 s: starved (runnable, not scheduled)"));
  const std::string busy = SchedGapText(At(5.0, 0.0), At(7.0, 0.5), 2.5);
  CHECK(Contains(busy, "ran 2.0 s on a CPU, waited 0.5 s runnable and slept 0.0 s: busy"));
  const std::string asleep = SchedGapText(At(5.0, 1.0), At(5.2, 1.3), 3.0);
  CHECK(Contains(asleep, "ran 0.2 s on a CPU, waited 0.3 s runnable and slept 2.5 s: asleep"));
  // Readings a little past the wall clock are clamped: the parts never exceed the gap.
  CHECK(Contains(SchedGapText(At(0, 0), At(2.2, 0.4), 2.0),
                 "ran 2.0 s on a CPU, waited 0.0 s runnable and slept 0.0 s: busy"));
}

void TestUnknownSaysNothing() {
  CHECK(SchedGapText(SchedTimes{}, At(1, 1), 2.0).empty());
  CHECK(SchedGapText(At(1, 1), SchedTimes{}, 2.0).empty());
  CHECK(wagma::ThreadSchedClock().Read().known == false);  // no thread watched
}

void TestRealThreadAndLoopPause() {
  const wagma::ThreadSchedClock clock(wagma::ThreadSchedClock::CurrentThreadId());
  const SchedTimes before = clock.Read();
  if (!before.known) {
    std::printf("thread_schedstat_test: this kernel keeps no schedstat; real part skipped\n");
    return;
  }
  // Spinning shows as time on a CPU: 50 ms of it within 5 s of wall time, however
  // loaded the host (a reading that stood still would not).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  volatile unsigned long spins = 0;
  while (clock.Read().run_s - before.run_s < 0.05 && std::chrono::steady_clock::now() < give_up) {
    for (int i = 0; i < 100000; ++i) spins = spins + 1;
  }
  CHECK(clock.Read().run_s - before.run_s >= 0.05);
  CHECK(std::chrono::steady_clock::now() < give_up);

  wagma::StallSettings settings;
  wagma::StallMonitor monitor(settings, 0, 2);
  monitor.WatchThread(clock);
  CHECK(monitor.InspectionDue(std::chrono::steady_clock::now()));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));  // the "loop" does not run
  CHECK(monitor.InspectionDue(std::chrono::steady_clock::now()));
  const wagma::StallMonitor::LoopPause pause = monitor.TakeLoopPause();
  CHECK(pause.seconds >= 0.8 && pause.seconds < 5.0);
  CHECK(Contains(pause.how, ": asleep (blocked on a lock or a wait, or stopped)"));
  CHECK(monitor.TakeLoopPause().seconds == 0);  // taken once
}

}  // namespace

int main() {
  TestVerdictIsTheLargestPart();
  TestUnknownSaysNothing();
  TestRealThreadAndLoopPause();
  return Report("thread_schedstat_test");
}
