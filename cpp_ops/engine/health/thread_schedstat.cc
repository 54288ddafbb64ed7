#include "health/thread_schedstat.h"

#include <algorithm>
#include <cstdio>
#include <sys/syscall.h>
#include <unistd.h>

namespace wagma {

namespace {
std::string Seconds1(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", s);
  return buf;
}
}  // namespace

ThreadSchedClock::ThreadSchedClock(pid_t tid)
    : path_("/proc/self/task/" + std::to_string(tid) + "/schedstat") {}

pid_t ThreadSchedClock::CurrentThreadId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

SchedTimes ThreadSchedClock::Read() const {
  SchedTimes t;
  if (path_.empty()) return t;
  FILE* f = std::fopen(path_.c_str(), "r");
  if (!f) return t;
  unsigned long long run_ns = 0, queued_ns = 0, timeslices = 0;
  // A kernel without scheduler accounting prints "0 0 0": unknown. A thread that has
  // not yet been switched or ticked may still show 0 ns run, with one timeslice.
  if (std::fscanf(f, "%llu %llu %llu", &run_ns, &queued_ns, &timeslices) == 3 &&
      (run_ns > 0 || timeslices > 0)) {
    t.known = true;
    t.run_s = run_ns * 1e-9;
    t.queued_s = queued_ns * 1e-9;
  }
  std::fclose(f);
  return t;
}

std::string SchedGapText(const SchedTimes& before, const SchedTimes& after, double gap_s) {
  if (!before.known || !after.known || gap_s <= 0) return "";
  // Clamp: the readings and the wall clock are taken at slightly different instants.
  const double ran = std::clamp(after.run_s - before.run_s, 0.0, gap_s);
  const double queued = std::clamp(after.queued_s - before.queued_s, 0.0, gap_s - ran);
  const double slept = gap_s - ran - queued;
  const char* verdict = "asleep (blocked on a lock or a wait, or stopped)";
  if (ran >= queued && ran >= slept) {
    verdict = "busy (running inside a call that did not return)";
  } else if (queued >= slept) {
    verdict = "starved (runnable, not scheduled)";
  }
  return "; of those " + Seconds1(gap_s) + " the thread ran " + Seconds1(ran) +
         " on a CPU, waited " + Seconds1(queued) + " runnable and slept " + Seconds1(slept) +
         ": " + verdict;
}

}  // namespace wagma
