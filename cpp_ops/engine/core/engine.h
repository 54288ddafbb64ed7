// Engine: the process-wide WAGMA engine. App threads enqueue requests and receive
// handles; the engine's loop does all of its communication.
//
//   Enqueue -> RequestQueue -> loop pass (control messages, reductions, activations)
//   -> output written -> handle completed (HandleTable) -> Poll / Wait.
//
// Engine is the conductor: it is the only class that sends messages (control
// messages through its ControlChannel, reductions it starts), and it owns the
// classes that each keep one concern (docs/design.md, section 4.3):
//   Transport           the seam to the network (transport.h; MpiTransport, GlooTransport)
//   EngineSettings      everything read from the environment
//   RequestQueue, JoinSlot   app threads -> loop; the join() in progress
//   ProgressPacer       spin, yield or sleep between passes
//   StreamTable         streams by name and id; early activations
//   GraceWindow         (per stream, in Stream) how long a passive join of the
//                       app's next round waits for the app (grace_window.h)
//   round_policy.h      the round rules, pure functions (which round, skip, leave
//                       out, supersede, averaging rule)
//   RegistrationBook    the registrar's round-0 tally (world rank 0)
//   JoinCoordinator     join() across ranks
//   PeerRoster          peers that joined or left
//   StallMonitor        stall reports (StallInspector), liveness probes
//                       (PeerLiveness), and the texts that name a stall
//   EngineMetrics       counters and timeline events
// Its own code is split by concern: engine.cc (lifecycle, the loop, requests,
// registration, activations), engine_rounds.cc (entering, joining and finishing
// rounds, published values), engine_faults.cc (failed rounds and streams, goodbye,
// stalls, liveness) and engine_join.cc (join()).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "reduce/buffer.h"
#include "transport/control_messages.h"
#include "observe/engine_metrics.h"
#include "core/engine_settings.h"
#include "core/handle_table.h"
#include "health/hold_report.h"
#include "rounds/join_coordinator.h"
#include "reduce/message_cut.h"
#include "transport/peer_roster.h"
#include "core/progress_pacer.h"
#include "core/registration_book.h"
#include "core/request_queue.h"
#include "health/stall_monitor.h"
#include "core/stream_state.h"
#include "core/stream_table.h"
#include "transport/transport.h"

namespace wagma {

class Engine {
 public:
  static Engine& Get();
  // Horovod elastic: ends this process's engine at once (unfinished rounds fail) and
  // installs a fresh one for Get(), to be started over the new member set. The old one
  // is kept: app handles and transport threads may still refer to it.
  static void Replace();

  // Collective over every rank. Idempotent. Returns an error text, empty on success.
  // `connect` makes the transport (collective: every rank calls Start alike); it
  // returns "" or an error. Start() connects over MPI (MpiTransport: MPI must already
  // be initialised, thread-multiple); wagma_start_gloo over Gloo (GlooTransport).
  using TransportFactory = std::function<std::string(std::unique_ptr<Transport>*)>;
  std::string Start(const TransportFactory& connect);
  std::string Start();
  // Completes what can be completed, then stops the background thread. Idempotent.
  // `timeout_s` < 0 keeps the configured limit (HOROVOD_WAGMA_SHUTDOWN_TIMEOUT, 30 s).
  void Shutdown(double timeout_s = -1);
  bool started() const { return started_.load(); }
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Under Horovod elastic, milliseconds from a first lost peer to the membership
  // verdict (HOROVOD_WAGMA_LOSS_SETTLE_MS); -1 otherwise.
  double VerdictDelayMs() const { return settings_.elastic ? settings_.loss_settle_ms : -1; }

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
  // Horovod elastic: records the change that formed this engine's member set.
  void MembershipChanged(const std::string& args_json) { metrics_.MembershipChanged(args_json); }

  const GroupSchedule& ScheduleFor(int num_ranks, int group_size);

 private:
  // Validates every stream's round 0 and orders join()s.
  static constexpr int kRegistrar = 0;
  Engine() : pool_(size_t(1) << 30) {}

  void Loop();
  // Start: every rank fails alike when one has a malformed HOROVOD_WAGMA_GRACE_FRACTION.
  std::string AgreeOnGraceSetting();
  // One pass of progress: requests, control messages, reductions, activations,
  // stalls. Serialised by loop_mu_. The background thread runs it, and so may an app
  // thread that waits for a result (WaitFor): on busy cores that saves the two thread
  // hand-offs of a small round.
  bool ProgressOnce();
  void FailEngine(const std::exception& e);
  bool DrainRequests();
  // Handles every control message that arrived; true when one was more than liveness
  // traffic (probes and their answers do not keep the pacer polling).
  bool PollControl();
  bool ProgressRounds();
  bool JoinActivatedRounds();
  // Whether the passive join of `round`, the round this rank's app calls next, waits
  // a little longer for the app's fresh value (GraceWindow, grace_window.h).
  bool HoldForApp(Stream& s, int64_t round);
  bool ShutdownStep();

  void HandleRequest(EngineRequest req);
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
  // The round an app call enters (ChooseAppRound); drops the completed rounds it skips.
  int64_t TakeAppRound(Stream& s);
  void EnterRound(Stream& s, RoundState& rs);
  // Stats of a completed passive round: left out, or the age of its value.
  void CountPassiveContribution(Stream& s, const RoundState& rs);
  void JoinRound(Stream& s, RoundState& rs, const void* contribution, bool activate);
  void JoinPassively(Stream& s, int64_t round);
  // Forgets a completed round the app skips ('delta': keeping its m - c for the next
  // result the app collects).
  void DropSkippedRound(Stream& s, int64_t round);
  // Writes the app's output, publishes it, completes the handle, forgets the round.
  void FinishAppRound(Stream& s, int64_t round);
  // Rounds after `round` that the engine joined passively (the "local" rule's bases).
  std::vector<RoundState*> LaterPassiveRounds(Stream& s, int64_t round);
  // By reference for app inputs, by copy for outputs (see stream_state.h).
  void Publish(Stream& s, const void* value, int64_t version, bool copy);
  // The app may free an input it gets back with an error: stop referencing it.
  void DetachPublished(Stream& s);

  // engine_join.cc
  void StartJoin();
  void OnJoined(int source, int64_t generation, const std::string& payload);
  void OnAllJoined(int last_rank, const std::string& payload);

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
  // Peers the transport saw fail without a goodbye (Transport::LostPeers): treated as
  // departed, with an error that says they were lost.
  void CheckLostPeers();
  // Fails the rounds that need `source`, which departed or was lost.
  void AfterDeparture(int source);
  // Ends the join in progress with an error naming `leaver`, which never joins.
  void EndJoinWithoutLeaver(int leaver);
  // Elastic, the verdict on lost_members_ (majority_rule.h): "membership changed: rank(s)
  // ... lost ...; K of P ranks remain", or "fenced: ...".
  std::string LostMembersText() const;
  // Elastic: tells the peers still live that this engine gave `verdict` and stops.
  void TellVerdict(const std::string& verdict);
  // Marks `peer` lost (`how`: why); outside elastic, fails the rounds that need it.
  void LosePeer(int peer, const std::string& how);
  // Registrar: rejects streams whose round 0 waits for a rank that joined or left.
  void RejectUnreachableRegistrations();
  std::string RegistrarGone(const std::string& name) const;
  void InspectStalls();
  void OnWaiting(int source, int stream_id, int64_t round);
  void OnStallNotice(int stream_id, int64_t round, const std::string& text);
  // hold_report.h: this rank's app waited WAGMA_HOLD_REPORT_S in `round`; a member asks
  // for this engine's view of a round its app waits in.
  void ReportHold(Stream& s, int64_t round, RoundState& rs, double waited_s);
  void OnHoldQuery(int source, int stream_id, int64_t round);
  JoinView CurrentJoinView() const;
  // WAGMA_TEST_LOSE_ACTIVATIONS: true while the next activation to a joined rank is
  // to be lost (counts it).
  bool LoseActivationForTest();
  // Peers whose engines may still answer (every other rank that did not leave, was not
  // lost, and did not stop at its own verdict).
  std::vector<int> LivePeerCandidates() const;
  void CheckRegistrationStalls();

  // --- Any thread ------------------------------------------------------------------
  std::atomic<bool> started_{false};
  std::atomic<bool> shutdown_requested_{false};
  std::atomic<bool> failed_{false};
  std::string failure_;  // FailEngine's message: written once, before failed_ is set
  std::mutex start_mu_;  // Start and Shutdown
  std::thread thread_;
  int rank_ = 0, size_ = 1;  // set by Start
  EngineSettings settings_;  // set by Start
  RequestQueue requests_;    // its own lock
  JoinSlot join_slot_;       // its own lock
  HandleTable handles_;      // its own lock
  BufferPool pool_;          // its own lock
  ProgressPacer pacer_;      // atomics; settings set by Start
  EngineMetrics metrics_;    // its own lock
  std::mutex sched_mu_;
  std::map<std::pair<int, int>, std::unique_ptr<GroupSchedule>> schedules_;

  // --- Loop state: touched only inside ProgressOnce (and Start, Shutdown's thread
  // join), under loop_mu_. The engine thread runs ProgressOnce, and so do app threads
  // waiting in WaitFor with HOROVOD_WAGMA_CALLER_PROGRESS_US > 0: it is not "engine
  // thread only".
  std::mutex loop_mu_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<ControlChannel> channel_;
  MessageCut cut_;  // how reductions post messages to other nodes
  StreamTable streams_;
  std::unique_ptr<RegistrationBook> book_;  // registrar (world rank 0) only
  JoinCoordinator joins_;
  PeerRoster roster_;
  // Elastic: the peers lost from this member set, and when the first was. Not marked
  // departed in roster_: no round fails on its own; the verdict ends them all.
  std::set<int> lost_members_;
  std::optional<std::chrono::steady_clock::time_point> first_loss_;
  // Elastic: peers that gave their own verdict first (kVerdict). Their engines stopped
  // for Horovod's reset: silent from then on, yet members, neither probed nor lost.
  std::set<int> peers_past_verdict_;
  std::unique_ptr<StallMonitor> stalls_;
  int64_t in_flight_ = 0;
  // A passive join is held back for an app (HoldForApp): the pacer polls as it does
  // while reductions are in flight, so the hold ends on time.
  std::atomic<bool> grace_holding_{false};
  // Reductions given up on (a peer left or stalled): their receives are cancelled,
  // their sends may never complete, so their buffers are kept rather than reused.
  std::vector<std::unique_ptr<GroupReduction>> abandoned_;
  bool leaving_ = false;  // goodbye sent: join no round beyond those it lists
  enum class ShutdownState { kDrain, kBarrier, kFinal };
  ShutdownState shutdown_state_ = ShutdownState::kDrain;
  std::chrono::steady_clock::time_point shutdown_started_;
};

}  // namespace wagma
