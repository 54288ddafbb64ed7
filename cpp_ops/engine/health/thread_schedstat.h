// ThreadSchedClock: how one thread spent a stretch of wall time, from the kernel's own
// accounting (/proc/self/task/<tid>/schedstat: time on a CPU, time runnable on a run
// queue).
//
// A hold in which the engine's loop did not run has three possible causes that need
// different fixes, and a stack dump cannot tell them apart (it shows where the thread
// is, not why it is not moving):
//   - busy:    the thread ran, inside a call that did not return (a spin, a livelock);
//   - starved: the thread was runnable but the scheduler did not pick it;
//   - asleep:  the thread was neither, so it waited on a lock, a futex or a signal stop.
// Invariant: run_s + queued_s never exceeds the wall time of the gap (both are parts of
// it); whatever is left is time asleep. SchedGapText names the largest of the three.
#pragma once

#include <string>
#include <sys/types.h>

namespace wagma {

struct SchedTimes {
  bool known = false;  // false where the kernel has no schedstat (then nothing is said)
  double run_s = 0;     // on a CPU, since the thread started
  double queued_s = 0;  // runnable, waiting for a CPU
};

class ThreadSchedClock {
 public:
  ThreadSchedClock() = default;
  // The thread `tid` of this process (gettid() of the engine thread: app threads also
  // run the loop's passes, and must not be read instead).
  explicit ThreadSchedClock(pid_t tid);
  SchedTimes Read() const;
  static pid_t CurrentThreadId();

 private:
  std::string path_;
};

// "; of those 39.4 s the thread ran 0.1 s on a CPU, waited 39.2 s runnable and slept
// 0.1 s: starved (runnable, not scheduled)", or "" when either reading is unknown.
std::string SchedGapText(const SchedTimes& before, const SchedTimes& after, double gap_s);

}  // namespace wagma
