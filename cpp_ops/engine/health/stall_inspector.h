// StallInspector: tells which ranks a waiting round is missing, like Horovod's stall
// inspector, for WAGMA's rounds.
//
// A rank whose app has waited in a round longer than `report_after_s` reports that to
// the round's inspector: the first member of the round (world rank 0 for global
// rounds of world streams). The inspector keeps, per (stream, round), who has reported
// waiting; once the first report is `warning_s` old it prints the members not among
// them, and repeats every `warning_s` while the stall lasts. Rounds that complete on
// the inspector are forgotten: completion there means every member contributed. Rounds
// that fail there (a stall timeout, a leaver, a lost member) are forgotten too: nobody
// waits in a failed round any more, so a warning about it would name waiters that left.
// A waiter whose own WAGMA_STALL_TIMEOUT_S has passed since it began to wait failed the
// round on its side (it says so to nobody): it is dropped, and the round with it once
// no waiter is left.
// Reports only flow after seconds of waiting, so healthy runs pay nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace wagma {

struct StallSettings {
  double warning_s = 60.0;   // WAGMA_STALL_WARNING_S
  double timeout_s = 0.0;    // WAGMA_STALL_TIMEOUT_S; 0 = never raise
  double report_after_s = 1.0;  // waiting this long is worth telling the inspector
  // Waiting this long starts liveness probes (a third of the shortest deadline); a
  // peer silent probe_grace_s after a probe is named as not responding. Both thirds
  // together end before the deadline, so a stopped rank is named in the warning and
  // the error, not found a moment after them (half and half met the deadline exactly,
  // and the verdict raced the timeout).
  double probe_after_s = 30.0;
  double probe_grace_s = 30.0;
  // WAGMA_HOLD_REPORT_S: an app call waiting this long, and an engine loop pausing this
  // long, are reported with what they wait on (hold_report.h); 0: never.
  double hold_report_s = 10.0;
  static StallSettings FromEnv();  // engine_settings.cc
};

class StallInspector {
 public:
  using Clock = std::chrono::steady_clock;
  explicit StallInspector(StallSettings settings) : settings_(settings) {}
  const StallSettings& settings() const { return settings_; }

  // Inspector side: `rank` has waited report_after_s in round `round` of a stream.
  void OnWaiting(int stream_id, int64_t round, int rank, Clock::time_point now);
  void Forget(int stream_id, int64_t round);
  // A failed stream: forget its rounds from `from_round` on.
  void ForgetFrom(int stream_id, int64_t from_round);

  struct Stall {
    int stream_id;
    int64_t round;
    std::set<int> waiting;
    double waited_s;  // by the first rank that reported
  };
  // Stalls due for a (repeated) warning now.
  std::vector<Stall> Due(Clock::time_point now);

 private:
  struct Entry {
    // Who waits, and since when (its report, back-dated by report_after_s): with a
    // stall timeout, a waiter past it has failed the round and waits no more.
    std::map<int, Clock::time_point> since;
    Clock::time_point first;
    Clock::time_point warned;  // epoch: never
  };
  StallSettings settings_;
  std::map<std::pair<int, int64_t>, Entry> entries_;
};

}  // namespace wagma
