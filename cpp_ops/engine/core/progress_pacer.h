// ProgressPacer: when the engine thread polls again, yields, or sleeps, and how long.
//
// Never busy-poll a core away from training. Right after activity replies are likely:
// spin, yielding the core to anyone runnable (25 times longer while reductions are in
// flight: peers' messages and the rendezvous hand-shakes of large ones need this
// thread promptly), where polling is what moves the bytes (MPI; not Gloo, whose own
// thread moves them: EngineSettings::FromEnv). Then sleep a quarter of the idle time
// so far, so that wake-ups get rarer the longer nothing happens, capped at 200 us
// while rounds are in flight and otherwise at idle_sleep_us (at least 4 ms after two
// idle seconds). A new request wakes the thread at once (RequestQueue).
//
// Also counts the app threads that drive progress themselves while they wait
// (HOROVOD_WAGMA_CALLER_PROGRESS_US > 0): while there is one the engine thread
// sleeps, since on oversubscribed cores two spinning threads per rank slow every
// hand-off.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace wagma {

struct PacerSettings {
  int64_t spin_us = 200;  // after activity, poll this long before sleeping
  // Longest sleep between polls while rounds come and go: an activation that arrives
  // meanwhile waits up to this long for a passive join.
  int64_t idle_sleep_us = 1000;
  // How long a waiting app thread drives progress itself before it sleeps (0 leaves
  // all progress to the engine thread).
  int64_t caller_progress_us = 0;
};

class ProgressPacer {
 public:
  using Clock = std::chrono::steady_clock;
  explicit ProgressPacer(PacerSettings settings = {}) : settings_(settings) {}
  const PacerSettings& settings() const { return settings_; }
  void Configure(PacerSettings settings) { settings_ = settings; }

  struct Pause {
    enum class Kind { kPollNow, kYield, kSleep } kind = Kind::kPollNow;
    int64_t sleep_us = 0;  // kSleep only
  };
  // After one pass of progress at `now`: what the engine thread does next. `busy`:
  // reductions are in flight.
  Pause AfterPass(bool progressed, bool busy, Clock::time_point now);
  // An app thread drove progress until `now`: pick up where it left off, spinning
  // first.
  void Resume(Clock::time_point now) { last_progress_ = now; }

  // App threads driving progress.
  void CallerStarts() { ++callers_; }
  // True when it was the last one (the engine thread should wake).
  bool CallerStops() { return --callers_ == 0; }
  bool callers_progressing() const { return callers_.load() > 0; }

 private:
  PacerSettings settings_;
  Clock::time_point last_progress_ = Clock::now();
  std::atomic<int> callers_{0};
};

}  // namespace wagma
