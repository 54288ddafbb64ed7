// Engine: the process-wide WAGMA engine. App threads enqueue requests and receive
// handles; one background thread owns all of the engine's MPI traffic.
//
//   Enqueue -> request queue -> background loop (control messages, reductions,
//   activations) -> output written -> handle completed -> Poll / Wait.
//
// The implementation is split by concern: engine.cc (lifecycle, the loop, requests,
// control messages), engine_rounds.cc (rounds and published values) and
// engine_faults.cc (peers that join or leave, stalls, mid-run mismatches).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "activation_channel.h"
#include "buffer.h"
#include "handle_table.h"
#include "peer_liveness.h"
#include "peer_roster.h"
#include "registration_book.h"
#include "stall_inspector.h"
#include "stream_state.h"
#include "stream_stats.h"
#include "timeline.h"

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
};

class Engine {
 public:
  static Engine& Get();

  // Collective over MPI_COMM_WORLD (duplicates communicators). Idempotent. Returns an
  // error text, empty on success. MPI must already be initialised, thread-multiple.
  std::string Start();
  // Completes what can be completed, then stops the background thread. Idempotent.
  // `timeout_s` < 0 keeps the configured limit (HOROVOD_WAGMA_SHUTDOWN_TIMEOUT, 30 s).
  void Shutdown(double timeout_s = -1);
  bool started() const { return started_.load(); }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Returns a handle > 0, or 0 with *error set. `input` and `output` (which may be the
  // same buffer) must stay valid, and the input unchanged, until the handle completes.
  int64_t Enqueue(const StreamSpec& spec, const void* input, void* output, std::string* error,
                  HandleTable::Callback on_done = nullptr);
  int Poll(int64_t handle) { return handles_.Poll(handle); }
  // Waits up to timeout_us (< 0: no limit): 1 done (*error set on failure; *round, if
  // given, the round that served the call), 0 still pending, -1 unknown handle.
  int WaitFor(int64_t handle, int64_t timeout_us, std::string* error,
              int64_t* round = nullptr);
  std::string Wait(int64_t handle);
  // join(): this rank has no more data. Its engine keeps serving every round with its
  // final model until all ranks have joined. The first call starts it; returns the
  // last rank to join once all have, -2 while still waiting after timeout_us, -1 with
  // *error set on failure.
  int JoinWait(int64_t timeout_us, std::string* error);
  EngineStats stats();
  // {"engine": {...}, "streams": {"name": {...}}}
  std::string StatsJson();

  const GroupSchedule& ScheduleFor(int num_ranks, int group_size);

 private:
  // Validates every stream's round 0 and orders join()s.
  static constexpr int kRegistrar = 0;
  Engine() : pool_(size_t(1) << 30) {}
  struct Request {
    enum class Kind { kRound, kJoin } kind = Kind::kRound;
    std::chrono::steady_clock::time_point enqueued;
    int64_t enqueued_us = 0;  // Timeline clock
    int64_t handle = 0;
    StreamSpec spec;
    const void* input = nullptr;
    void* output = nullptr;
    bool has_callback = false;
  };

  void Loop();
  // One pass of progress: requests, control messages, reductions, activations,
  // stalls. Serialised by loop_mu_. The background thread runs it, and so may an app
  // thread that waits for a result (WaitFor): on busy cores that saves the two thread
  // hand-offs of a small round.
  bool ProgressOnce();
  void FailEngine(const std::exception& e);
  bool DrainRequests();
  bool PollControl();
  bool ProgressRounds();
  bool JoinActivatedRounds();
  bool ShutdownStep();

  void HandleRequest(Request req);
  void OnRegister(int source, const StreamSpec& spec);
  // Tells every registered rank the registrar's verdicts.
  void Announce(const std::vector<RegistrationBook::Verdict>& verdicts);
  void OnAssign(const std::string& name, int stream_id);
  void OnReject(const std::string& name, const std::string& error);
  void OnActivate(int source, int stream_id, int64_t round, const std::string& payload);
  // A live rank whose app has stayed away from a stream while its engine is left out
  // of rounds: named on stderr (and the timeline), like a stall, but nobody waits.
  void ReportAwayApps();
  void SendControl(int dest, ControlKind kind, int stream_id, int64_t round,
                   const std::string& payload = "");

  // engine_rounds.cc
  std::vector<int> MembersOf(const Stream& s, int64_t round, RoundPlan* plan) const;
  RoundState& GetRound(Stream& s, int64_t round);
  // The round an app call enters: the next one, or, with wait-avoiding global rounds,
  // the newest its engine already served (the rounds before it are skipped).
  int64_t TakeAppRound(Stream& s);
  // A group round whose group is this rank alone (no peer ever waits for it there).
  bool IsSoloRound(const Stream& s, int64_t round) const;
  void EnterRound(Stream& s, RoundState& rs);
  // Wait-avoiding global rounds: a passive join of `round` would contribute a value
  // older than max_staleness rounds, a candidate for leaving out (never waited for).
  bool StaleInRounds(const Stream& s, int64_t round) const;
  // Stats of a completed passive round: left out, or the age of its value.
  void CountPassiveContribution(Stream& s, const RoundState& rs);
  void JoinRound(Stream& s, RoundState& rs, const void* contribution, bool activate);
  void JoinPassively(Stream& s, int64_t round);
  // Writes the app's output, publishes it, completes the handle, forgets the round.
  void FinishAppRound(Stream& s, int64_t round);
  // Rounds after `round` that the engine joined passively (the "local" rule's bases).
  std::vector<RoundState*> LaterPassiveRounds(Stream& s, int64_t round);
  // By reference for app inputs, by copy for outputs (see stream_state.h).
  void Publish(Stream& s, const void* value, int64_t version, bool copy);
  // The app may free an input it gets back with an error: stop referencing it.
  void DetachPublished(Stream& s);

  // engine_faults.cc
  void FailRound(Stream& s, int64_t round, const std::string& error);
  // Fails the stream on this rank for good, from round `from_round` on: earlier
  // rounds, whose data every member already exchanges, still complete. `tell_peers`
  // spreads the error to every member, so no rank is left waiting in a later round.
  void FailStream(Stream& s, const std::string& error, int64_t from_round = 0,
                  bool tell_peers = false);
  void OnStreamError(int stream_id, int64_t from_round, const std::string& error);
  void SayGoodbye();
  void OnGoodbye(int source, const std::string& payload);
  void StartJoin();
  void OnJoined(int source, const std::string& payload);
  void OnAllJoined(int last_rank, const std::string& payload);
  void FinishJoin(int last_rank, const std::string& error);
  // Registrar: rejects streams whose round 0 waits for a rank that joined or left.
  void RejectUnreachableRegistrations();
  std::string RegistrarGone(const std::string& name) const;
  void InspectStalls();
  void OnWaiting(int source, int stream_id, int64_t round);
  void OnStallNotice(int stream_id, int64_t round, const std::string& text);
  // Probes peers while a call has waited long; "; ranks not responding: [..] ..." or "".
  void ProbePeers(double longest_wait_s);
  std::vector<int> LivePeerCandidates() const;
  std::string UnresponsiveNote() const;
  void CheckRegistrationStalls();

  std::atomic<bool> started_{false};
  std::atomic<bool> shutdown_requested_{false};
  std::mutex start_mu_;
  std::thread thread_;
  int rank_ = 0, size_ = 1;
  MPI_Comm control_comm_ = MPI_COMM_NULL;
  MPI_Comm data_comm_ = MPI_COMM_NULL;
  std::unique_ptr<ActivationChannel> channel_;
  std::unique_ptr<RegistrationBook> book_;  // registrar (world rank 0) only
  Timeline timeline_;
  ReductionThresholds thresholds_;
  MessageCut cut_;  // how reductions post messages to other nodes
  double shutdown_timeout_s_ = 30.0;
  int64_t spin_us_ = 200;  // after activity, poll this long before sleeping
  // Longest sleep between polls while rounds come and go (HOROVOD_WAGMA_IDLE_SLEEP_US):
  // an activation that arrives meanwhile waits up to this long for a passive join.
  int64_t idle_sleep_us_ = 1000;
  // How long a waiting app thread drives progress itself before it sleeps
  // (HOROVOD_WAGMA_CALLER_PROGRESS_US; 0 leaves all progress to the engine thread).
  int64_t caller_progress_us_ = 0;
  // App threads driving progress now. While there is one, the engine thread sleeps:
  // on oversubscribed cores two spinning threads per rank slow every hand-off.
  std::atomic<int> progressing_callers_{0};
  std::mutex loop_mu_;  // held for each ProgressOnce; guards the state below
  std::atomic<bool> failed_{false};

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Request> queue_;

  HandleTable handles_;
  BufferPool pool_;

  std::mutex sched_mu_;
  std::map<std::pair<int, int>, std::unique_ptr<GroupSchedule>> schedules_;

  // Background thread only.
  std::map<std::string, Stream> streams_;
  std::unordered_map<int, Stream*> streams_by_id_;
  // Activations for stream ids this rank has not been assigned yet, replayed on
  // assignment: dropping one would leave the round to this rank's app, a wait on an app.
  struct EarlyActivation {
    int source;
    int64_t round;
    std::string payload;
  };
  std::map<int, std::vector<EarlyActivation>> early_activations_;
  int64_t in_flight_ = 0;
  // Reductions given up on (a peer left or stalled): their receives are cancelled,
  // their sends may never complete, so their buffers are kept rather than reused.
  std::vector<std::unique_ptr<GroupReduction>> abandoned_;
  PeerRoster roster_;
  std::unique_ptr<StallInspector> stalls_;
  std::unique_ptr<PeerLiveness> liveness_;
  std::chrono::steady_clock::time_point last_stall_check_;
  std::map<std::string, std::chrono::steady_clock::time_point> registration_warned_;
  bool leaving_ = false;      // goodbye sent: join no round beyond those it lists
  bool self_joined_ = false;  // this rank called join() and not all ranks have
  std::vector<int> join_order_;  // registrar: ranks joined so far, in arrival order
  std::map<int, int64_t> join_last_round_;  // registrar: per stream, the last round any
                                            // joined rank's app entered

  std::mutex join_mu_;
  std::condition_variable join_cv_;
  bool join_requested_ = false;
  int join_result_ = -2;
  std::string join_error_;
  enum class ShutdownState { kDrain, kBarrier, kFinal };
  ShutdownState shutdown_state_ = ShutdownState::kDrain;
  MPI_Request shutdown_barrier_ = MPI_REQUEST_NULL;
  std::chrono::steady_clock::time_point shutdown_started_;

  std::mutex stats_mu_;
  EngineStats stats_;
  std::map<std::string, StreamStats> stream_stats_;
};

}  // namespace wagma
