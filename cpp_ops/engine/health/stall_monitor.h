// StallMonitor: the state behind noticing and naming stalls, and the texts that name
// them. It owns the StallInspector (which ranks a waiting round is missing, on the
// round's first member) and PeerLiveness (which peers' engines stopped answering),
// paces the inspection (every 50 ms), and remembers when each pending round-0
// registration was last warned about. It decides and formats; Engine walks its
// rounds, sends the reports and probes, and fails what expired.
// Owned by the engine's loop; no locking of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "health/peer_liveness.h"
#include "health/stall_inspector.h"
#include "health/thread_schedstat.h"

namespace wagma {

class StallMonitor {
 public:
  using Clock = std::chrono::steady_clock;
  StallMonitor(const StallSettings& settings, int rank, int size)
      : inspector_(settings), liveness_(rank, size) {}

  const StallSettings& settings() const { return inspector_.settings(); }
  StallInspector& inspector() { return inspector_; }

  // True at most once per 50 ms: stalls are measured in seconds. A gap between
  // inspections of more than kListenGap means this engine's loop did not run: silence
  // in it is not held against peers (PeerLiveness::Discount).
  bool InspectionDue(Clock::time_point now);
  static constexpr std::chrono::milliseconds kListenGap{500};
  // The longest such gap since the last call, in seconds (0: none), and how the engine
  // thread spent it (SchedGapText; "" without a clock), then forgotten: the hold report
  // names a loop that did not run, and whether it was busy, starved or asleep.
  struct LoopPause {
    double seconds = 0;
    std::string how;
  };
  LoopPause TakeLoopPause() { return std::exchange(loop_pause_, LoopPause{}); }
  // The engine thread's scheduler accounting, read once per inspection (at most 20 Hz).
  void WatchThread(ThreadSchedClock clock) { sched_clock_ = std::move(clock); }
  // Any message from a peer shows its engine alive.
  void Heard(int peer, Clock::time_point now) { liveness_.Heard(peer, now); }
  // Peers among `live_peers` to probe now, given the longest wait of an app call;
  // with `heartbeat`, whatever the wait (elastic: silence itself is the news).
  std::vector<int> ProbesDue(double longest_wait_s, bool heartbeat,
                             const std::vector<int>& live_peers, Clock::time_point now);
  // Peers among `live_peers` that left a probe unanswered for probe_grace_s.
  std::vector<int> Unresponsive(const std::vector<int>& live_peers, Clock::time_point now) const;
  // Seconds since anything was heard from `peer`; negative: never.
  double SinceHeard(int peer, Clock::time_point now) const {
    return liveness_.SinceHeard(peer, now);
  }
  // " (last heard 3.2 s ago)" or " (never heard from)": for a loss verdict's text.
  std::string LastHeardNote(int peer, Clock::time_point now) const;
  // "; ranks not responding: [..] (...)", or "" while every probed peer answers.
  std::string UnresponsiveNote(const std::vector<int>& live_peers, Clock::time_point now) const;
  // Whether the pending registration `key` is due for its (repeated) warning.
  bool RegistrationWarningDue(const std::string& key, double waited_s, Clock::time_point now);

 private:
  StallInspector inspector_;
  LoopPause loop_pause_;
  ThreadSchedClock sched_clock_;
  SchedTimes sched_at_last_inspection_;
  PeerLiveness liveness_;
  Clock::time_point last_inspection_;
  std::map<std::string, Clock::time_point> registration_warned_;
};

// "[1, 2]"
std::string RankList(const std::vector<int>& ranks);

// The error of an app call that waited past WAGMA_STALL_TIMEOUT_S in round `round`
// (round 0 still unvalidated when `registered` is false), before notes are appended.
std::string StallTimeoutText(double waited_s, double timeout_s, const std::string& stream,
                             bool registered, bool global, int64_t round);

// What the inspector tells the waiting ranks of a stalled round.
std::string StallNoteText(bool global, const std::vector<int>& missing, int inspector_rank);

}  // namespace wagma
