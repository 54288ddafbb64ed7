#include "core/engine.h"
#include "health/hold_report.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "transport/message_tags.h"
#include "transport/mpi_transport.h"
#include "rounds/round_policy.h"

namespace wagma {

namespace {
// Engines are never destroyed: a background thread (this engine's, or Gloo's for a
// replaced one) may outlive static destructors at exit or still refer to them.
std::atomic<Engine*>& Current() {
  static std::atomic<Engine*> engine{nullptr};
  return engine;
}
}  // namespace

Engine& Engine::Get() {
  Engine* e = Current().load();
  if (e == nullptr) {
    static std::once_flag once;
    std::call_once(once, [] { Current().store(new Engine()); });
    e = Current().load();
  }
  return *e;
}

void Engine::Replace() {
  Engine& old = Get();
  old.Shutdown(0.0);  // its rounds need members that are gone: give them up now
  Current().store(new Engine());
}

std::string Engine::Start() {
  return Start([](std::unique_ptr<Transport>* out) {
    return MpiTransport::Create(kRequiredTagUpperBound, out);
  });
}

std::string Engine::Start(const TransportFactory& connect) {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (started_) return "";
  if (shutdown_requested_) return "the WAGMA engine was shut down; it cannot be restarted";
  // Collective, so it runs on every rank before any rank can return an error.
  std::string error = connect(&transport_);
  if (!error.empty()) return error;
  rank_ = transport_->rank();
  size_ = transport_->size();
  settings_ = EngineSettings::FromEnv(transport_->ProgressesOnItsOwn());
  try {
    error = cut_.Init(*transport_, settings_.fragments);  // collective too
    if (error.empty()) error = AgreeOnGraceSetting();    // and this
  } catch (const std::exception& e) {
    // Gloo's collectives throw when a peer is gone or late past the timeout; an
    // exception must not cross the C API (it would abort the process, unexplained).
    error = std::string("the engines' start-up agreement failed: ") + e.what();
  }
  if (!error.empty()) {
    transport_.reset();
    return error;
  }
  pacer_.Configure(settings_.pacer);
  stalls_ = std::make_unique<StallMonitor>(settings_.stalls, rank_, size_);
  if (!settings_.timeline_path.empty()) {
    error = metrics_.OpenTimeline(settings_.timeline_path, rank_);
    if (!error.empty()) return "WAGMA_TIMELINE: " + error;
  }
  channel_ = std::make_unique<ControlChannel>(*transport_);
  if (rank_ == kRegistrar) book_ = std::make_unique<RegistrationBook>();
  thread_ = std::thread([this] { Loop(); });
  started_ = true;
  return "";
}

std::string Engine::AgreeOnGraceSetting() {
  // The grace window is this rank's own affair (peers need not agree on it), but a
  // malformed value must stop every rank's start, not leave the others to wait for it.
  const int64_t bad = settings_.grace_error.empty() ? 0 : 1;
  int64_t lo = 0, hi = 0;
  transport_->AllreduceMinMax(&bad, &lo, &hi, 1);
  if (bad) return settings_.grace_error;
  if (hi) return "HOROVOD_WAGMA_GRACE_FRACTION is malformed on another rank";
  return "";
}

void Engine::Shutdown(double timeout_s) {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (!started_ || shutdown_requested_) return;
  if (timeout_s >= 0) settings_.shutdown_timeout_s = timeout_s;
  shutdown_requested_ = true;
  requests_.NotifyAll();
  if (thread_.joinable()) thread_.join();
  started_ = false;
}

const GroupSchedule& Engine::ScheduleFor(int num_ranks, int group_size) {
  std::lock_guard<std::mutex> lock(sched_mu_);
  auto key = std::make_pair(num_ranks, group_size);
  auto it = schedules_.find(key);
  if (it == schedules_.end()) {
    it = schedules_
             .emplace(key, std::make_unique<GroupSchedule>(
                               GroupSchedule::Build(num_ranks, group_size)))
             .first;
  }
  return *it->second;
}

EngineStats Engine::stats() {
  EngineStats out = metrics_.Snapshot();
  out.pending_handles = static_cast<int64_t>(handles_.pending());
  out.queue_depth = static_cast<int64_t>(requests_.size());
  return out;
}

std::string Engine::StatsJson() { return metrics_.Json(stats()); }

int Engine::WaitFor(int64_t handle, int64_t timeout_us, std::string* error,
                    int64_t* round) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  const int64_t t0_us = Timeline::NowUs();
  int64_t spin_us = pacer_.settings().caller_progress_us;
  if (timeout_us >= 0) spin_us = std::min(spin_us, timeout_us);
  const Clock::time_point spin_until = t0 + std::chrono::microseconds(spin_us);
  if (spin_us > 0) pacer_.CallerStarts();
  while (spin_us > 0 && !failed_ && handles_.Poll(handle) == 0 && Clock::now() < spin_until) {
    if (!loop_mu_.try_lock()) {
      std::this_thread::yield();
      continue;
    }
    try {
      if (!failed_ && !shutdown_requested_ && !ProgressOnce()) std::this_thread::yield();
    } catch (const std::exception& e) {
      FailEngine(e);
    }
    loop_mu_.unlock();
  }
  if (spin_us > 0 && pacer_.CallerStops()) requests_.Notify();  // the engine thread resumes
  const int64_t spun_us =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
  if (timeout_us >= 0) timeout_us = std::max<int64_t>(0, timeout_us - spun_us);
  HandleTable::Outcome outcome;
  const int state = handles_.WaitFor(handle, timeout_us, &outcome);
  if (spin_us > 0) {
    outcome.waited_us += spun_us;
    outcome.first_wait_at_us = std::min(outcome.first_wait_at_us, t0_us);
  }
  if (state < 0) *error = "unknown handle " + std::to_string(handle);
  if (state != 1) return state;
  *error = outcome.error;
  if (round) *round = outcome.error.empty() ? outcome.round : -1;
  if (!outcome.stream.empty()) {
    metrics_.AppWaited(outcome.stream, outcome.round, outcome.global, outcome.first_wait_at_us,
                       outcome.waited_us);
  }
  return 1;
}

std::string Engine::Wait(int64_t handle) {
  std::string error;
  WaitFor(handle, -1, &error);
  return error;
}

int Engine::JoinWait(int64_t timeout_us, std::string* error) {
  return join_slot_.Wait(timeout_us, error, [this]() -> std::string {
    if (!started_ || shutdown_requested_) return "the WAGMA engine is not running: call init() first";
    if (failed_) return failure_;  // its loop has ended: nobody would serve the join
    EngineRequest req;
    req.kind = EngineRequest::Kind::kJoin;
    requests_.Push(std::move(req));
    return "";
  });
}

int64_t Engine::Enqueue(const StreamSpec& spec, const void* input, void* output,
                        std::string* error, HandleTable::Callback on_done) {
  if (!started_) {
    *error = "the WAGMA engine is not running: call init() first";
    return 0;
  }
  if (shutdown_requested_) {
    *error = "the WAGMA engine is shutting down";
    return 0;
  }
  *error = ValidateConfig(spec.config);
  if (!error->empty()) return 0;
  EngineRequest req;
  req.enqueued = std::chrono::steady_clock::now();
  req.enqueued_us = Timeline::NowUs();
  req.has_callback = on_done != nullptr;
  req.handle = handles_.Allocate(std::move(on_done));
  req.spec = spec;
  req.input = input;
  req.output = output;
  const int64_t handle = req.handle;
  requests_.Push(std::move(req));
  return handle;
}

// ---------------------------------------------------------------------------------
// Background loop

bool Engine::ProgressOnce() {
  // Each part of the pass is timed: one that outlasts WAGMA_HOLD_REPORT_S is named
  // (hold_report.h), so that a loop that did not run says where it was.
  const double hold_s = stalls_->settings().hold_report_s;
  const char* part = nullptr;
  auto t = std::chrono::steady_clock::now();
  auto timed = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    if (part && hold_s > 0 && std::chrono::duration<double>(now - t).count() > hold_s) {
      const double s = std::chrono::duration<double>(now - t).count();
      std::fprintf(stderr, "%s\n", HoldLoopPartText(rank_, part, s).c_str());
    }
    part = name;
    t = now;
  };
  bool progressed = false;
  timed("taking requests");
  progressed |= DrainRequests();
  timed("polling control messages");
  progressed |= PollControl();
  timed("checking lost peers");
  CheckLostPeers();  // after PollControl: a peer's goodbye comes before its socket closes
  timed("progressing reductions");
  progressed |= ProgressRounds();
  timed("joining activated rounds");
  progressed |= JoinActivatedRounds();
  timed("inspecting stalls");
  InspectStalls();
  timed("flushing control sends");
  channel_->FlushSends();
  timed(nullptr);
  metrics_.LoopPass(streams_.rounds_held(), in_flight_);
  return progressed;
}

void Engine::FailEngine(const std::exception& e) {
  if (failed_) return;  // callers hold loop_mu_ and checked; the message is set once
  std::fprintf(stderr, "[horovod_wagma rank %d] engine error: %s\n", rank_, e.what());
  failure_ = std::string("WAGMA engine error: ") + e.what();
  failed_ = true;
  // Requests enqueued from now on fail at once: no loop will take them.
  handles_.Close(failure_);
  join_slot_.Finish(-1, failure_);
}

void Engine::Loop() {
  pthread_setname_np(pthread_self(), "wagma-engine");  // findable in top / /proc
  {
    // A loop pause names how this thread spent it (busy, starved, asleep), read from
    // the kernel's accounting of this thread, whichever thread runs the pass.
    std::lock_guard<std::mutex> lock(loop_mu_);
    stalls_->WatchThread(ThreadSchedClock(ThreadSchedClock::CurrentThreadId()));
  }
  using Clock = std::chrono::steady_clock;
  pacer_.Resume(Clock::now());
  while (!failed_) {
    bool progressed = false;
    {
      std::lock_guard<std::mutex> lock(loop_mu_);
      if (failed_) break;
      try {
        progressed = ProgressOnce();
        if (shutdown_requested_ && ShutdownStep()) break;
      } catch (const std::exception& e) {
        FailEngine(e);
        break;
      }
    }
    if (!progressed && pacer_.callers_progressing()) {
      // An app thread runs ProgressOnce for us; wake when it stops (or on a request,
      // which it may be too busy spinning on its own handle to drain quickly).
      requests_.WaitFor(std::chrono::milliseconds(5), [this] {
        return !pacer_.callers_progressing() || shutdown_requested_.load();
      });
      pacer_.Resume(Clock::now());  // pick up where the caller left off: spin first
      continue;
    }
    const ProgressPacer::Pause pause =
        pacer_.AfterPass(progressed,
                         !progressed && (metrics_.reductions_in_flight() || grace_holding_),
                         Clock::now());
    if (pause.kind == ProgressPacer::Pause::Kind::kPollNow) continue;
    if (pause.kind == ProgressPacer::Pause::Kind::kYield) {
      std::this_thread::yield();
      continue;
    }
    metrics_.Slept();
    requests_.WaitFor(std::chrono::microseconds(pause.sleep_us),
                      [this] { return shutdown_requested_.load(); });
  }
  handles_.Close("the WAGMA engine shut down before this request completed");
  join_slot_.Finish(-1, "the WAGMA engine shut down before every rank joined");
  metrics_.CloseTimeline();
}

bool Engine::DrainRequests() {
  std::deque<EngineRequest> batch = requests_.TakeAll();
  for (EngineRequest& r : batch) HandleRequest(std::move(r));
  return !batch.empty();
}

bool Engine::PollControl() {
  bool any = false;
  ControlMessage msg;
  // What a pass that outlasts WAGMA_HOLD_REPORT_S spent its time on (hold_report.h):
  // how many messages of which kinds, the longest receive and the longest handling.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point began = Clock::now();
  PollTally tally;
  Clock::time_point t = began;
  while (channel_->Poll(&msg)) {
    const Clock::time_point received = Clock::now();
    tally.longest_receive_s =
        std::max(tally.longest_receive_s, std::chrono::duration<double>(received - t).count());
    ++tally.messages;
    ++tally.by_kind[static_cast<size_t>(msg.kind) % tally.by_kind.size()];
    // Liveness traffic is not work: counted as progress, a heartbeat every second from
    // each peer kept an idle engine (an elastic job's set-up, evaluation, data loading)
    // polling at 1 kHz, never reaching the pacer's idle regime; on 8 ranks sharing 2
    // cores that starved Horovod's own collectives past HOROVOD_GLOO_TIMEOUT_SECONDS
    // (spurious elastic resets at start-up, 3 of 5 launches across emulated hosts).
    any = any || (msg.kind != ControlKind::kProbe && msg.kind != ControlKind::kProbeAnswer);
    stalls_->Heard(msg.source, std::chrono::steady_clock::now());
    std::string name, text;
    switch (msg.kind) {
      case ControlKind::kRegister:
        OnRegister(msg.source, StreamSpec::Parse(msg.payload));
        break;
      case ControlKind::kAssign:
        UnpackNameAndText(msg.payload, &name, &text);
        OnAssign(name, msg.stream_id);
        break;
      case ControlKind::kReject:
        UnpackNameAndText(msg.payload, &name, &text);
        OnReject(name, text);
        break;
      case ControlKind::kActivate:
        OnActivate(msg.source, msg.stream_id, msg.round, msg.payload);
        break;
      case ControlKind::kGoodbye:
        OnGoodbye(msg.source, msg.payload);
        break;
      case ControlKind::kJoined:
        OnJoined(msg.source, msg.round, msg.payload);  // round: the join's generation
        break;
      case ControlKind::kAllJoined:
        OnAllJoined(msg.stream_id, msg.payload);
        break;
      case ControlKind::kStreamError:
        OnStreamError(msg.stream_id, msg.round, msg.payload);
        break;
      case ControlKind::kWaiting:
        OnWaiting(msg.source, msg.stream_id, msg.round);
        break;
      case ControlKind::kStallNotice:
        OnStallNotice(msg.stream_id, msg.round, msg.payload);
        break;
      case ControlKind::kProbe:
        SendControl(msg.source, ControlKind::kProbeAnswer, -1, 0);
        break;
      case ControlKind::kProbeAnswer:
        break;  // hearing it was the point
      case ControlKind::kVerdict:
        peers_past_verdict_.insert(msg.source);
        break;
      case ControlKind::kHoldQuery:
        OnHoldQuery(msg.source, msg.stream_id, msg.round);
        break;
    }
    t = Clock::now();
    tally.longest_handling_s =
        std::max(tally.longest_handling_s, std::chrono::duration<double>(t - received).count());
  }
  const double hold_s = stalls_->settings().hold_report_s;
  const double spent_s = std::chrono::duration<double>(Clock::now() - began).count();
  if (hold_s > 0 && spent_s > hold_s) {
    std::fprintf(stderr, "%s\n", HoldPollText(rank_, spent_s, tally).c_str());
  }
  return any;
}

bool Engine::ProgressRounds() {
  bool any = false;
  for (auto& kv : streams_.all()) {
    Stream& s = kv.second;
    const bool wa_global = s.spec.config.wait_avoiding_global();
    for (auto it = s.rounds.begin(); it != s.rounds.end();) {
      RoundState& rs = it->second;
      const int64_t round = it->first;
      ++it;  // FinishAppRound may erase this round
      if (!rs.reduction || !rs.reduction->Progress()) continue;
      const int64_t cut = rs.reduction->messages_cut();
      rs.included = rs.reduction->included_count();
      rs.self_included = rs.reduction->self_included();
      rs.steps_behind = rs.reduction->self_steps_behind();
      rs.reduction.reset();
      rs.completed = true;
      --in_flight_;
      any = true;
      metrics_.ReductionCompleted(s.spec.name, round, rs.plan.global, rs.passive, rs.members,
                                  rs.joined_at_us, cut);
      // Completion on the inspector means every member contributed.
      if (rs.members[0] == rank_) stalls_->inspector().Forget(s.id, round);
      if (rs.passive) CountPassiveContribution(s, rs);
      if (PublishServedResult(s.spec.config.averaging, rs.passive, rs.final_model,
                              !rs.error.empty() || rs.mean.empty()))
        // At the input's version: if the app takes this round after all, its own
        // output (one version newer) replaces the group's mean.
        Publish(s, rs.mean.data(), InputVersion(round), /*copy=*/true);
      switch (FateOfCompletedRound(rs.call.has_value(), joins_.self_joined(), round,
                                   s.next_app_round, wa_global, !rs.error.empty())) {
        case CompletedRoundFate::kFinishApp:
          FinishAppRound(s, round);
          break;
        case CompletedRoundFate::kDrop:
          DropSkippedRound(s, round);
          break;
        case CompletedRoundFate::kSupersedeOlder:
          // One result held per stream: the app will skip the older ones.
          for (int64_t q : SupersededRounds(StreamRoundsView(s), round))
            DropSkippedRound(s, q);
          break;
        case CompletedRoundFate::kHold:
          break;
      }
    }
  }
  return any;
}

bool Engine::JoinActivatedRounds() {
  bool any = false;
  bool holding = false;
  for (auto& kv : streams_.all()) {
    Stream& s = kv.second;
    while (!s.activations.empty()) {
      const int64_t round = *s.activations.begin();
      bool earlier_in_flight = false;
      for (auto it = s.rounds.begin(); it != s.rounds.end() && it->first < round; ++it) {
        if (it->second.in_flight()) {
          earlier_in_flight = true;
          break;
        }
      }
      // Joined since the activation came (the app may even have collected it), or
      // beyond the rounds this rank's goodbye promised to serve: forget it. Otherwise
      // contribute the freshest value: first let earlier rounds in flight complete.
      // However old the published value is, join: a value too old is left out of the
      // mean, and nobody waits for this rank's app.
      const ActivationAction action = OnActivation(
          s.Joined(round), leaving_ && round > s.last_joined_round, earlier_in_flight);
      if (action == ActivationAction::kWait) break;
      if (action == ActivationAction::kJoin && HoldForApp(s, round)) {
        holding = true;
        break;
      }
      s.activations.erase(s.activations.begin());
      if (action == ActivationAction::kDiscard) continue;
      JoinPassively(s, round);
      any = true;
    }
  }
  grace_holding_ = holding;
  return any;
}

bool Engine::HoldForApp(Stream& s, int64_t round) {
  // A rank that joined or is leaving has no app to wait for; at shutdown nobody comes.
  if (joins_.self_joined() || leaving_ || shutdown_requested_) return false;
  if (std::chrono::steady_clock::now() >= s.grace.HoldUntil(round)) return false;
  if (s.grace_held_round != round) {
    s.grace_held_round = round;
    metrics_.GraceHeld(s.spec.name);
  }
  return true;
}

bool Engine::ShutdownStep() {
  if (shutdown_state_ == ShutdownState::kDrain &&
      shutdown_started_.time_since_epoch().count() == 0) {
    shutdown_started_ = std::chrono::steady_clock::now();
    SayGoodbye();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                       shutdown_started_).count();
  bool quiet = in_flight_ == 0 && channel_->FlushSends();
  for (auto& kv : streams_.all()) quiet = quiet && kv.second.activations.empty();
  switch (shutdown_state_) {
    case ShutdownState::kDrain:
      // Finish what this rank started before telling the others it is done: a round
      // this rank activated needs its peers' engines, which stay up until the barrier.
      if (quiet) {
        transport_->StartBarrier();
        shutdown_state_ = ShutdownState::kBarrier;
      }
      break;
    case ShutdownState::kBarrier:
      if (transport_->BarrierDone()) shutdown_state_ = ShutdownState::kFinal;
      break;
    case ShutdownState::kFinal:
      if (quiet) {
        transport_->Close();
        return true;
      }
      break;
  }
  if (elapsed > settings_.shutdown_timeout_s) {
    std::fprintf(stderr,
                 "[horovod_wagma rank %d] shutdown: gave up after %.0f s with %lld round(s) "
                 "in flight (peers gone or a round was never entered)\n",
                 rank_, elapsed, static_cast<long long>(in_flight_));
    return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------
// Requests, registration, activation

void Engine::HandleRequest(EngineRequest req) {
  if (req.kind == EngineRequest::Kind::kJoin) {
    StartJoin();
    return;
  }
  if (shutdown_requested_) {
    handles_.Complete(req.handle, "the WAGMA engine is shutting down");
    return;
  }
  if (joins_.self_joined()) {
    handles_.Complete(req.handle, "this rank called join(): it cannot enter rounds until "
                                  "every rank has joined");
    return;
  }
  if (req.spec.members.empty()) {
    req.spec.members.resize(size_);
    for (int r = 0; r < size_; ++r) req.spec.members[r] = r;
  }
  const auto me = std::find(req.spec.members.begin(), req.spec.members.end(), rank_);
  if (me == req.spec.members.end()) {
    handles_.Complete(req.handle, "rank " + std::to_string(rank_) +
                                      " is not in the process set of stream '" +
                                      NameForMessage(req.spec.name) + "'");
    return;
  }
  Stream* found = streams_.Find(req.spec.name);
  if (!found && roster_.departed(kRegistrar)) {
    handles_.Complete(req.handle, RegistrarGone(req.spec.name));
    return;
  }
  if (!found) {
    Stream& s = streams_.Create(req.spec.name);
    s.spec = req.spec;
    s.fingerprint = s.spec.Fingerprint();
    s.my_index = static_cast<int>(me - req.spec.members.begin());
    const int num_members = static_cast<int>(req.spec.members.size());
    s.schedule = &ScheduleFor(num_members, req.spec.config.group_size);
    s.grace.set_cap_fraction(settings_.grace_fraction);
    if (rank_ == kRegistrar) {
      OnRegister(rank_, req.spec);
    } else {
      ControlMessage msg;
      msg.kind = ControlKind::kRegister;
      msg.payload = req.spec.Serialize();
      channel_->Send(kRegistrar, msg);
    }
    found = streams_.Find(req.spec.name);
  } else {
    Stream& s = *found;
    const std::string mismatch = s.spec.Mismatch("its round 0", req.spec, "this call");
    if (!mismatch.empty() && (s.id < 0 || s.FailedAt(s.next_app_round))) {
      // Round 0 is still being validated: refuse just this call.
      handles_.Complete(req.handle, "a stream cannot change after round 0: " + mismatch);
      return;
    }
    if (!mismatch.empty()) {
      // Every member hears it: the others would otherwise wait for this rank forever.
      const std::string error = "rank " + std::to_string(rank_) + " called round " +
                                std::to_string(s.next_app_round) + " of stream '" +
                                NameForMessage(s.spec.name) +
                                "', which cannot change after round 0: " +
                                mismatch;
      FailStream(s, error, s.next_app_round, /*tell_peers=*/true);
    }
  }
  Stream& s = *found;
  if (s.FailedAt(s.next_app_round)) {
    handles_.Complete(req.handle, s.error);
    return;
  }
  metrics_.StreamCalled(s.spec.name);
  s.app_called_at = std::chrono::steady_clock::now();
  s.left_out_since_app_call = 0;
  ++s.app_calls;
  const int64_t round = TakeAppRound(s);
  s.grace.AppEntered(round, s.app_called_at);
  RoundState& rs = GetRound(s, round);
  if (round == s.grace_held_round && !rs.joined) metrics_.GraceCaught(s.spec.name);
  rs.call = AppCall{req.enqueued, req.enqueued_us, req.handle, req.input, req.output,
                    req.has_callback};
  if (s.id >= 0) EnterRound(s, rs);
}

void Engine::OnRegister(int source, const StreamSpec& spec) {
  Announce(book_->Add(source, spec));
  RejectUnreachableRegistrations();
}

void Engine::Announce(const std::vector<RegistrationBook::Verdict>& verdicts) {
  for (const RegistrationBook::Verdict& v : verdicts) {
    for (int r : v.ranks) {
      if (r == rank_) continue;
      ControlMessage msg;
      msg.kind = v.error.empty() ? ControlKind::kAssign : ControlKind::kReject;
      msg.stream_id = v.stream_id;
      msg.payload = PackNameAndText(v.name, v.error);
      channel_->Send(r, msg);
    }
    if (std::find(v.ranks.begin(), v.ranks.end(), rank_) == v.ranks.end()) continue;
    if (v.error.empty()) {
      OnAssign(v.name, v.stream_id);
    } else {
      OnReject(v.name, v.error);
    }
  }
}

void Engine::OnAssign(const std::string& name, int stream_id) {
  Stream* s = streams_.Find(name);
  if (!s) return;
  const std::vector<StreamTable::EarlyActivation> replay = streams_.Assign(*s, stream_id);
  for (auto& kv : s->rounds) {
    if (kv.second.call && !kv.second.joined) EnterRound(*s, kv.second);
  }
  for (const auto& a : replay) OnActivate(a.source, stream_id, a.round, a.payload);
}

void Engine::OnReject(const std::string& name, const std::string& error) {
  if (Stream* s = streams_.Find(name)) FailStream(*s, error);
}

void Engine::SendControl(int dest, ControlKind kind, int stream_id, int64_t round,
                         const std::string& payload) {
  ControlMessage msg;
  msg.kind = kind;
  msg.stream_id = stream_id;
  msg.round = round;
  msg.payload = payload;
  channel_->Send(dest, msg);
}

void Engine::OnActivate(int source, int stream_id, int64_t round, const std::string& payload) {
  Stream* found = streams_.FindById(stream_id);
  if (!found) {
    // The registrar's assignment of this id is still on its way (or this rank's app
    // has not reached the stream's round 0 yet): keep it for OnAssign.
    streams_.KeepEarly(stream_id, StreamTable::EarlyActivation{source, round, payload});
    metrics_.EarlyActivation();
    return;
  }
  Stream& s = *found;
  metrics_.ActivationReceived(s.spec.name, round, source);
  if (UnpackFingerprint(payload) != s.fingerprint && !s.FailedAt(round)) {
    FailStream(s, "rank " + std::to_string(source) + " activated round " +
                      std::to_string(round) + " of stream '" + NameForMessage(s.spec.name) +
                      "' with a different shape, dtype or configuration than this rank's",
               round, /*tell_peers=*/true);
    return;
  }
  if (s.FailedAt(round)) return;
  if (s.Joined(round)) return;  // rounds collected or dropped are forgotten
  s.activations.insert(round);
  // The round the app calls next: how long until it does is what the grace window
  // learns from.
  if (round == s.next_app_round) s.grace.Activated(round, std::chrono::steady_clock::now());
}

}  // namespace wagma
