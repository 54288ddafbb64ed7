// EngineMetrics: the engine's counters (stats(), per stream and overall) and its
// timeline (WAGMA_TIMELINE), fed by one typed event per thing that happens, so that
// counting and tracing an event stay together and callers build no JSON.
//
// Thread-safe: the engine's loop records events; app threads record their waits and
// read snapshots. One lock guards the counters; the timeline has its own.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "observe/stream_stats.h"
#include "observe/timeline.h"

namespace wagma {

struct EngineStats {
  int64_t rounds_completed = 0;
  int64_t passive_joins = 0;
  int64_t activations_sent = 0;
  int64_t loop_iterations = 0;
  int64_t sleeps = 0;
  int64_t bytes_sent = 0;  // reduction payload
  int64_t messages_cut = 0;  // reduction messages sent as several fragments (MessageCut)
  // Passive joins: how many rounds old the contributed (published) value was.
  int64_t staleness_sum = 0;
  int64_t staleness_max = 0;
  int64_t rounds_left_out = 0;  // passive joins whose value was left out (max_staleness)
  int64_t early_activations = 0;  // activations that came before the stream's id; replayed
  int64_t call_wait_us = 0;  // app calls: enqueue to completion, summed
  int64_t pending_handles = 0;  // issued and not yet waited on
  int64_t rounds_held = 0;      // round states kept by the loop
  int64_t queue_depth = 0;      // requests not yet taken by the loop
  int64_t in_flight = 0;        // reductions in progress
  int64_t hold_reports = 0;     // app calls that waited WAGMA_HOLD_REPORT_S (hold_report.h)
  int64_t joins_on_hold_query = 0;  // rounds a joined rank started on a hold query
  int64_t loop_pauses = 0;      // engine loop pauses longer than that
};

class EngineMetrics {
 public:
  // Opens the timeline at `path` for `rank`; "" or an error.
  std::string OpenTimeline(const std::string& path, int rank) { return timeline_.Open(path, rank); }
  void CloseTimeline() { timeline_.Close(); }

  // The loop.
  void LoopPass(int64_t rounds_held, int64_t in_flight);
  bool reductions_in_flight();  // as of the last pass
  void Slept();

  // Streams and rounds.
  void StreamCalled(const std::string& stream);  // listed from its first call on
  void RoundsSkipped(const std::string& stream, int64_t n);
  // The grace window (grace_window.h) held a passive join back; the app then came in
  // time and contributed its fresh value.
  void GraceHeld(const std::string& stream);
  void GraceCaught(const std::string& stream);
  void EarlyActivation();
  void ActivationReceived(const std::string& stream, int64_t round, int from);
  void ActivationsSent(const std::string& stream, int64_t round, const std::vector<int>& to,
                       int64_t at_us);
  void ReductionStarted(const std::string& stream, int64_t bytes_sent);
  void ReductionCompleted(const std::string& stream, int64_t round, bool global, bool passive,
                          const std::vector<int>& members, int64_t started_us,
                          int64_t messages_cut);
  // `staleness`: rounds the published value predates the round; `age`: rounds since
  // the app last entered.
  void PassiveJoin(const std::string& stream, int64_t round, int64_t staleness, int64_t age,
                   bool stale_in_rounds, int64_t at_us);
  // A completed passive round: left out of the mean, or counted at `age` (no age for a
  // rank that serves its final model).
  void PassiveContribution(const std::string& stream, bool left_out, bool stale_in_rounds,
                           bool has_age, int64_t age);
  // The app collected round `round` (enqueued at enqueued_us, `call_us` ago).
  void AppRoundDone(const std::string& stream, int64_t round, bool global, bool has_callback,
                    int64_t enqueued_us, int64_t call_us);
  // An app thread waited on a handle (WaitFor).
  void AppWaited(const std::string& stream, int64_t round, bool global, int64_t from_us,
                 int64_t waited_us);

  // Faults.
  void RoundFailed(const std::string& stream, int64_t round, const std::string& error);
  void PeerLeft(int rank);
  void PeerLost(int rank);  // its connection failed (Transport::LostPeers)
  // Horovod elastic: this engine's member set replaced another (the frontend's record:
  // time, generation, P', rank, lost and added ranks, as a JSON object body).
  void MembershipChanged(const std::string& args_json);
  void StallWarning(const std::string& stream, int64_t round, const std::string& missing_json);
  void AppAway(const std::string& stream, int rank, double away_s, int64_t left_out);
  void HoldReport(const std::string& stream, int64_t round);
  void JoinOnHoldQuery(const std::string& stream, int64_t round);
  void LoopPause(double paused_s);

  // Snapshots. pending_handles and queue_depth are the caller's to fill in.
  EngineStats Snapshot();
  // {"engine": {...}, "streams": {"name": {...}}}
  std::string Json(const EngineStats& engine);

 private:
  // One more of `counter`, and a "fault" instant `event` for round `round` of `stream`.
  void CountRoundFault(int64_t EngineStats::*counter, const char* event,
                       const std::string& stream, int64_t round);

  std::mutex mu_;
  EngineStats engine_;
  std::map<std::string, StreamStats> streams_;
  Timeline timeline_;
};

}  // namespace wagma
