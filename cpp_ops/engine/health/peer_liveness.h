// PeerLiveness: which peers' engines still answer, so that a stall error can name a
// lost host rather than the survivor stuck behind it.
//
// A stalled round knows which members have not entered it, but such a member may be
// alive and itself waiting in a round that needs the lost rank (seen across emulated
// hosts with a cut link: rank 0's error named rank 1, a survivor). An engine's
// background thread answers a probe within milliseconds whatever its app is doing,
// so a peer that leaves a probe unanswered for `grace` seconds is stopped, dead, or
// unreachable, while a slow or stuck app is not blamed.
//
// Invariants:
//  * a peer counts as unresponsive only after a probe was sent to it and nothing at
//    all was heard from it for `grace` seconds after that probe;
//  * any message from a peer (a probe, an answer, any control message) clears it;
//  * silence counts only while this engine listened: a spell in which its own loop
//    did not run (its thread starved of CPU, as at 8 ranks' start-up on 2 cores,
//    seen to cost 3 s and a false verdict on every peer) is discounted (Discount);
//  * probes go out only while an app call has waited half the shortest stall
//    deadline, at most once per `interval` per peer, so healthy runs send none. A
//    stalled rank then sends P-1 small messages per interval. Under Horovod elastic
//    they go out as a heartbeat instead, to peers not heard from within `interval`.
// Owned by the background thread; no locking.
#pragma once

#include <chrono>
#include <vector>

namespace wagma {

class PeerLiveness {
 public:
  using Clock = std::chrono::steady_clock;
  PeerLiveness(int rank, int size);

  void Heard(int peer, Clock::time_point now);
  // The peers to probe now, among `candidates`: neither heard from nor probed within
  // `interval_s`. Records the probes as sent.
  std::vector<int> ProbeDue(const std::vector<int>& candidates, Clock::time_point now,
                            double interval_s);
  // Peers among `candidates` that have left a probe unanswered for at least
  // `grace_s`, in rank order; *silent_s is the longest such silence.
  std::vector<int> Unresponsive(const std::vector<int>& candidates, Clock::time_point now,
                                double grace_s, double* silent_s) const;
  // Seconds since anything was heard from `peer`; negative: never.
  double SinceHeard(int peer, Clock::time_point now) const;
  // This engine did not listen for `gap`: every unanswered probe's clock moves on by it.
  void Discount(Clock::duration gap);

 private:
  struct Peer {
    Clock::time_point heard{};       // epoch: never
    Clock::time_point probed{};      // the latest probe
    Clock::time_point unanswered{};  // the first probe since `heard`; epoch: none
  };
  int rank_;
  std::vector<Peer> peers_;
};

}  // namespace wagma
