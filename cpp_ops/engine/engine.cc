#include "engine.h"

#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "message_tags.h"

namespace wagma {
namespace {

double EnvDouble(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

std::string PackNameAndText(const std::string& name, const std::string& text) {
  const uint32_t n = static_cast<uint32_t>(name.size());
  std::string out(reinterpret_cast<const char*>(&n), sizeof(n));
  return out + name + text;
}

void UnpackNameAndText(const std::string& bytes, std::string* name, std::string* text) {
  uint32_t n = 0;
  if (bytes.size() < sizeof(n)) throw std::runtime_error("short control payload");
  std::memcpy(&n, bytes.data(), sizeof(n));
  *name = bytes.substr(sizeof(n), n);
  *text = bytes.substr(sizeof(n) + n);
}

}  // namespace

Engine& Engine::Get() {
  // Never destroyed: the background thread may outlive static destructors at exit.
  static Engine* engine = new Engine();
  return *engine;
}

std::string Engine::Start() {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (started_) return "";
  if (shutdown_requested_) return "the WAGMA engine was shut down; it cannot be restarted";
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return "MPI is not initialized: call horovod_wagma's init() (or hvd.init() with MPI) "
           "before using the WAGMA engine";
  }
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    return "MPI was initialized without MPI_THREAD_MULTIPLE (provided level " +
           std::to_string(provided) +
           "); the WAGMA engine needs it. Do not set HOROVOD_MPI_THREADS_DISABLE.";
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &control_comm_);
  MPI_Comm_dup(MPI_COMM_WORLD, &data_comm_);
  MPI_Comm_rank(data_comm_, &rank_);
  MPI_Comm_size(data_comm_, &size_);
  void* attr = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(data_comm_, MPI_TAG_UB, &attr, &flag);
  if (!flag || *static_cast<int*>(attr) < kRequiredTagUpperBound) {
    return "this MPI's tag upper bound is below " + std::to_string(kRequiredTagUpperBound) +
           ", which the WAGMA engine needs";
  }
  // Collective, so it runs on every rank before any rank can return an error.
  const std::string cut_error = cut_.Init(data_comm_);
  if (!cut_error.empty()) return cut_error;
  thresholds_.small_bytes = static_cast<size_t>(
      EnvDouble("HOROVOD_WAGMA_SMALL_BYTES", static_cast<double>(thresholds_.small_bytes)));
  thresholds_.pair_scatter_bytes = static_cast<size_t>(EnvDouble(
      "HOROVOD_WAGMA_PAIR_SCATTER_BYTES", static_cast<double>(thresholds_.pair_scatter_bytes)));
  shutdown_timeout_s_ = EnvDouble("HOROVOD_WAGMA_SHUTDOWN_TIMEOUT", 30.0);
  spin_us_ = static_cast<int64_t>(EnvDouble("HOROVOD_WAGMA_SPIN_US", 200));
  idle_sleep_us_ = static_cast<int64_t>(EnvDouble("HOROVOD_WAGMA_IDLE_SLEEP_US", 1000));
  caller_progress_us_ =
      static_cast<int64_t>(EnvDouble("HOROVOD_WAGMA_CALLER_PROGRESS_US", 0));
  stalls_ = std::make_unique<StallInspector>(StallSettings::FromEnv());
  liveness_ = std::make_unique<PeerLiveness>(rank_, size_);
  const char* timeline_path = std::getenv("WAGMA_TIMELINE");
  if (timeline_path && *timeline_path) {
    const std::string error = timeline_.Open(timeline_path, rank_);
    if (!error.empty()) return "WAGMA_TIMELINE: " + error;
  }
  channel_ = std::make_unique<ActivationChannel>(control_comm_);
  if (rank_ == kRegistrar) book_ = std::make_unique<RegistrationBook>();
  thread_ = std::thread([this] { Loop(); });
  started_ = true;
  return "";
}

void Engine::Shutdown(double timeout_s) {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (!started_ || shutdown_requested_) return;
  if (timeout_s >= 0) shutdown_timeout_s_ = timeout_s;
  shutdown_requested_ = true;
  queue_cv_.notify_all();
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
  EngineStats out;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    out = stats_;
  }
  out.pending_handles = static_cast<int64_t>(handles_.pending());
  std::lock_guard<std::mutex> lock(queue_mu_);
  out.queue_depth = static_cast<int64_t>(queue_.size());
  return out;
}

std::string Engine::StatsJson() {
  const EngineStats e = stats();
  std::string out = "{\"engine\":{";
  const std::pair<const char*, int64_t> fields[] = {
      {"rounds_completed", e.rounds_completed}, {"passive_joins", e.passive_joins},
      {"activations_sent", e.activations_sent}, {"loop_iterations", e.loop_iterations},
      {"sleeps", e.sleeps}, {"bytes_sent", e.bytes_sent}, {"messages_cut", e.messages_cut},
      {"staleness_sum", e.staleness_sum}, {"staleness_max", e.staleness_max},
      {"rounds_left_out", e.rounds_left_out}, {"early_activations", e.early_activations},
      {"call_wait_us", e.call_wait_us}, {"pending_handles", e.pending_handles},
      {"rounds_held", e.rounds_held}, {"queue_depth", e.queue_depth},
      {"in_flight", e.in_flight}};
  bool first = true;
  for (const auto& f : fields) {
    out += std::string(first ? "" : ",") + "\"" + f.first + "\":" + std::to_string(f.second);
    first = false;
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  return out + "},\"streams\":" + StreamStatsJson(stream_stats_) + "}";
}

int Engine::WaitFor(int64_t handle, int64_t timeout_us, std::string* error,
                    int64_t* round) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  const int64_t t0_us = Timeline::NowUs();
  int64_t spin_us = caller_progress_us_;
  if (timeout_us >= 0) spin_us = std::min(spin_us, timeout_us);
  const Clock::time_point spin_until = t0 + std::chrono::microseconds(spin_us);
  if (spin_us > 0) ++progressing_callers_;
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
  if (spin_us > 0 && --progressing_callers_ == 0) {
    std::lock_guard<std::mutex> lock(queue_mu_);  // no lost wake-up: see Loop()
    queue_cv_.notify_one();
  }
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
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      StreamStats& st = stream_stats_[outcome.stream];
      (outcome.global ? st.global_wait_us : st.group_wait_us) += outcome.waited_us;
    }
    if (timeline_.enabled()) {
      timeline_.Span(Timeline::kApp, "wait", outcome.stream, outcome.first_wait_at_us,
                     outcome.first_wait_at_us + outcome.waited_us,
                     "\"round\":" + std::to_string(outcome.round));
    }
  }
  return 1;
}

std::string Engine::Wait(int64_t handle) {
  std::string error;
  WaitFor(handle, -1, &error);
  return error;
}

int Engine::JoinWait(int64_t timeout_us, std::string* error) {
  std::unique_lock<std::mutex> lock(join_mu_);
  if (!join_requested_) {
    if (!started_ || shutdown_requested_) {
      *error = "the WAGMA engine is not running: call init() first";
      return -1;
    }
    join_requested_ = true;
    join_result_ = -2;
    join_error_.clear();
    Request req;
    req.kind = Request::Kind::kJoin;
    {
      std::lock_guard<std::mutex> qlock(queue_mu_);
      queue_.push_back(std::move(req));
    }
    queue_cv_.notify_one();
  }
  auto done = [this] { return join_result_ != -2 || !join_error_.empty(); };
  if (timeout_us < 0) {
    join_cv_.wait(lock, done);
  } else {
    join_cv_.wait_for(lock, std::chrono::microseconds(timeout_us), done);
  }
  if (!done()) return -2;
  join_requested_ = false;
  if (!join_error_.empty()) {
    *error = join_error_;
    return -1;
  }
  return join_result_;
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
  Request req;
  req.enqueued = std::chrono::steady_clock::now();
  req.enqueued_us = Timeline::NowUs();
  req.has_callback = on_done != nullptr;
  req.handle = handles_.Allocate(std::move(on_done));
  req.spec = spec;
  req.input = input;
  req.output = output;
  const int64_t handle = req.handle;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    queue_.push_back(std::move(req));
  }
  queue_cv_.notify_one();
  return handle;
}

// ---------------------------------------------------------------------------------
// Background loop

bool Engine::ProgressOnce() {
  bool progressed = false;
  progressed |= DrainRequests();
  progressed |= PollControl();
  progressed |= ProgressRounds();
  progressed |= JoinActivatedRounds();
  InspectStalls();
  channel_->FlushSends();
  int64_t held = 0;
  for (const auto& kv : streams_) held += static_cast<int64_t>(kv.second.rounds.size());
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.loop_iterations;
  stats_.rounds_held = held;
  stats_.in_flight = in_flight_;
  return progressed;
}

void Engine::FailEngine(const std::exception& e) {
  std::fprintf(stderr, "[horovod_wagma rank %d] engine error: %s\n", rank_, e.what());
  failed_ = true;
  handles_.FailAll(std::string("WAGMA engine error: ") + e.what());
  FinishJoin(-1, std::string("WAGMA engine error: ") + e.what());
}

void Engine::Loop() {
  pthread_setname_np(pthread_self(), "wagma-engine");  // findable in top / /proc
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_progress = Clock::now();
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
    const Clock::time_point now = Clock::now();
    if (progressed) {
      last_progress = now;
      continue;
    }
    // Never busy-poll a core away from training. Right after activity, replies are
    // likely: spin, yielding the core to anyone runnable. Then sleep for a quarter of
    // the idle time so far (so wake-ups get rarer the longer nothing happens), capped
    // low while rounds are in flight. An enqueue wakes the loop at once.
    if (progressing_callers_ > 0) {
      // An app thread runs ProgressOnce for us; wake when it stops (or on a request,
      // which it may be too busy spinning on its own handle to drain quickly).
      std::unique_lock<std::mutex> lock(queue_mu_);
      queue_cv_.wait_for(lock, std::chrono::milliseconds(5), [this] {
        return progressing_callers_ == 0 || !queue_.empty() || shutdown_requested_.load();
      });
      last_progress = Clock::now();  // pick up where the caller left off: spin first
      continue;
    }
    const auto idle_us =
        std::chrono::duration_cast<std::chrono::microseconds>(now - last_progress).count();
    bool busy;
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      busy = stats_.in_flight > 0;
    }
    // While rounds are in flight, peers' messages (and rendezvous hand-shakes of large
    // ones) need this thread promptly: spin longer before sleeping.
    if (idle_us < (busy ? 25 * spin_us_ : spin_us_)) {
      std::this_thread::yield();
      continue;
    }
    const int64_t cap_us =
        busy ? 200 : (idle_us > 2000000 ? std::max<int64_t>(4000, idle_sleep_us_) : idle_sleep_us_);
    const int64_t sleep_us = std::max<int64_t>(20, std::min<int64_t>(cap_us, idle_us / 4));
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.sleeps;
    }
    std::unique_lock<std::mutex> lock(queue_mu_);
    queue_cv_.wait_for(lock, std::chrono::microseconds(sleep_us),
                       [this] { return !queue_.empty() || shutdown_requested_.load(); });
  }
  handles_.FailAll("the WAGMA engine shut down before this request completed");
  FinishJoin(-1, "the WAGMA engine shut down before every rank joined");
  timeline_.Close();
}

bool Engine::DrainRequests() {
  std::deque<Request> batch;
  {
    std::lock_guard<std::mutex> lock(queue_mu_);
    batch.swap(queue_);
  }
  for (Request& r : batch) HandleRequest(std::move(r));
  return !batch.empty();
}

bool Engine::PollControl() {
  bool any = false;
  ControlMessage msg;
  while (channel_->Poll(&msg)) {
    any = true;
    liveness_->Heard(msg.source, std::chrono::steady_clock::now());
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
        OnJoined(msg.source, msg.payload);
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
    }
  }
  return any;
}

bool Engine::ProgressRounds() {
  bool any = false;
  for (auto& kv : streams_) {
    Stream& s = kv.second;
    for (auto it = s.rounds.begin(); it != s.rounds.end();) {
      RoundState& rs = it->second;
      const int64_t round = it->first;
      ++it;  // FinishAppRound may erase this round
      if (!rs.reduction || !rs.reduction->Progress()) continue;
      if (const int64_t cut = rs.reduction->messages_cut()) {
        std::lock_guard<std::mutex> lock(stats_mu_);
        stats_.messages_cut += cut;
      }
      rs.included = rs.reduction->included_count();
      rs.self_included = rs.reduction->self_included();
      rs.steps_behind = rs.reduction->self_steps_behind();
      rs.reduction.reset();
      rs.completed = true;
      --in_flight_;
      any = true;
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.rounds_completed;
      }
      // Completion on the inspector means every member contributed.
      if (rs.members[0] == rank_) stalls_->Forget(s.id, round);
      if (rs.passive) CountPassiveContribution(s, rs);
      if (timeline_.enabled()) {
        std::string members;
        for (int m : rs.members) members += (members.empty() ? "" : ",") + std::to_string(m);
        timeline_.Span(Timeline::kEngine, "reduction", s.spec.name, rs.joined_at_us,
                       Timeline::NowUs(),
                       "\"round\":" + std::to_string(round) + ",\"kind\":\"" +
                           (rs.plan.global ? "global" : "group") + "\",\"passive\":" +
                           (rs.passive ? "true" : "false") + ",\"members\":[" + members + "]");
      }
      if (rs.call) {
        FinishAppRound(s, round);
      } else if (self_joined_ || round < s.next_app_round) {
        // Nobody will collect it (this rank joined, or its app skipped past it): the
        // published value stays the final model.
        s.Drop(round);
      } else if (s.spec.config.wait_avoiding_global() && rs.error.empty()) {
        // A lagging app takes only the newest served round's result: drop the older
        // ones held for it, so memory stays at one result per stream. Only those the
        // app will skip: every round between them and this one was served too.
        int64_t r = round - 1;
        while (r >= s.next_app_round && s.ServedPassively(r)) --r;
        for (auto older = s.rounds.lower_bound(r + 1); older != s.rounds.end() &&
                                                       older->first < round;) {
          const RoundState& o = older->second;
          const int64_t q = older->first;
          ++older;
          if (!o.call && o.completed && o.error.empty()) s.Drop(q);
        }
      }
    }
  }
  return any;
}

bool Engine::JoinActivatedRounds() {
  bool any = false;
  for (auto& kv : streams_) {
    Stream& s = kv.second;
    while (!s.activations.empty()) {
      const int64_t round = *s.activations.begin();
      // Joined since the activation came (the app may even have collected it).
      if (s.Joined(round) || (leaving_ && round > s.last_joined_round)) {
        // Joined already, or beyond the rounds this rank's goodbye promised to serve.
        s.activations.erase(s.activations.begin());
        continue;
      }
      // Contribute the freshest value: first let this stream's earlier rounds that are
      // in flight here complete. They wait on communication only, and these waits run
      // towards lower round numbers, so they cannot form a cycle.
      bool earlier_in_flight = false;
      for (auto it = s.rounds.begin(); it != s.rounds.end() && it->first < round; ++it) {
        if (it->second.in_flight()) {
          earlier_in_flight = true;
          break;
        }
      }
      if (earlier_in_flight) break;
      // However old the published value is, join: a value too old is left out of the
      // mean (JoinPassively), and nobody waits for this rank's app.
      s.activations.erase(s.activations.begin());
      JoinPassively(s, round);
      any = true;
    }
  }
  return any;
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
  for (auto& kv : streams_) quiet = quiet && kv.second.activations.empty();
  switch (shutdown_state_) {
    case ShutdownState::kDrain:
      // Finish what this rank started before telling the others it is done: a round
      // this rank activated needs its peers' engines, which stay up until the barrier.
      if (quiet) {
        MPI_Ibarrier(control_comm_, &shutdown_barrier_);
        shutdown_state_ = ShutdownState::kBarrier;
      }
      break;
    case ShutdownState::kBarrier: {
      int done = 0;
      MPI_Test(&shutdown_barrier_, &done, MPI_STATUS_IGNORE);
      if (done) shutdown_state_ = ShutdownState::kFinal;
      break;
    }
    case ShutdownState::kFinal:
      if (quiet) {
        MPI_Comm_free(&data_comm_);
        MPI_Comm_free(&control_comm_);
        return true;
      }
      break;
  }
  if (elapsed > shutdown_timeout_s_) {
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

void Engine::HandleRequest(Request req) {
  if (req.kind == Request::Kind::kJoin) {
    StartJoin();
    return;
  }
  if (shutdown_requested_) {
    handles_.Complete(req.handle, "the WAGMA engine is shutting down");
    return;
  }
  if (self_joined_) {
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
  auto it = streams_.find(req.spec.name);
  if (it == streams_.end() && roster_.departed(kRegistrar)) {
    handles_.Complete(req.handle, RegistrarGone(req.spec.name));
    return;
  }
  if (it == streams_.end()) {
    Stream& s = streams_[req.spec.name];
    s.spec = req.spec;
    s.fingerprint = s.spec.Fingerprint();
    s.my_index = static_cast<int>(me - req.spec.members.begin());
    const int num_members = static_cast<int>(req.spec.members.size());
    s.schedule = &ScheduleFor(num_members, req.spec.config.group_size);
    if (rank_ == kRegistrar) {
      OnRegister(rank_, req.spec);
    } else {
      ControlMessage msg;
      msg.kind = ControlKind::kRegister;
      msg.payload = req.spec.Serialize();
      channel_->Send(kRegistrar, msg);
    }
    it = streams_.find(req.spec.name);
  } else {
    Stream& s = it->second;
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
  Stream& s = it->second;
  if (s.FailedAt(s.next_app_round)) {
    handles_.Complete(req.handle, s.error);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stream_stats_[s.spec.name];  // listed from its first call on
  }
  s.app_called_at = std::chrono::steady_clock::now();
  s.left_out_since_app_call = 0;
  ++s.app_calls;
  const int64_t round = TakeAppRound(s);
  RoundState& rs = GetRound(s, round);
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
  auto it = streams_.find(name);
  if (it == streams_.end()) return;
  Stream& s = it->second;
  s.id = stream_id;
  streams_by_id_[stream_id] = &s;
  for (auto& kv : s.rounds) {
    if (kv.second.call && !kv.second.joined) EnterRound(s, kv.second);
  }
  auto early = early_activations_.find(stream_id);
  if (early == early_activations_.end()) return;
  std::vector<EarlyActivation> replay = std::move(early->second);
  early_activations_.erase(early);
  for (const EarlyActivation& a : replay) OnActivate(a.source, stream_id, a.round, a.payload);
}

void Engine::OnReject(const std::string& name, const std::string& error) {
  auto it = streams_.find(name);
  if (it == streams_.end()) return;
  FailStream(it->second, error);
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
  auto it = streams_by_id_.find(stream_id);
  if (it == streams_by_id_.end()) {
    // The registrar's assignment of this id is still on its way (or this rank's app
    // has not reached the stream's round 0 yet): keep it for OnAssign. Bounded, since
    // a peer activates at most a few rounds past round 0 before this rank must enter.
    constexpr size_t kMaxEarly = size_t(1) << 16;
    std::vector<EarlyActivation>& early = early_activations_[stream_id];
    if (early.size() >= kMaxEarly) {
      throw std::runtime_error("more than " + std::to_string(kMaxEarly) +
                               " activations arrived for stream id " +
                               std::to_string(stream_id) + ", which this rank was never "
                               "assigned (latest from rank " + std::to_string(source) + ")");
    }
    early.push_back(EarlyActivation{source, round, payload});
    std::lock_guard<std::mutex> lock(stats_mu_);
    ++stats_.early_activations;
    return;
  }
  Stream& s = *it->second;
  if (timeline_.enabled()) {
    timeline_.Instant(Timeline::kEngine, "activation", "activation_received", Timeline::NowUs(),
                      "\"stream\":\"" + JsonEscape(s.spec.name) + "\",\"round\":" +
                          std::to_string(round) + ",\"from\":" + std::to_string(source));
  }
  uint64_t fingerprint = 0;
  if (payload.size() == sizeof(fingerprint))
    std::memcpy(&fingerprint, payload.data(), sizeof(fingerprint));
  if (fingerprint != s.fingerprint && !s.FailedAt(round)) {
    FailStream(s, "rank " + std::to_string(source) + " activated round " +
                      std::to_string(round) + " of stream '" + NameForMessage(s.spec.name) +
                      "' with a different shape, dtype or configuration than this rank's",
               round, /*tell_peers=*/true);
    return;
  }
  if (s.FailedAt(round)) return;
  if (s.Joined(round)) return;  // rounds collected or dropped are forgotten
  s.activations.insert(round);
}

}  // namespace wagma
