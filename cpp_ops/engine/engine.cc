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

constexpr int kRegistrar = 0;

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
  small_bytes_ = static_cast<size_t>(EnvDouble("HOROVOD_WAGMA_SMALL_BYTES", 64 * 1024));
  shutdown_timeout_s_ = EnvDouble("HOROVOD_WAGMA_SHUTDOWN_TIMEOUT", 30.0);
  spin_us_ = static_cast<int64_t>(EnvDouble("HOROVOD_WAGMA_SPIN_US", 200));
  channel_ = std::make_unique<ActivationChannel>(control_comm_);
  if (rank_ == kRegistrar) book_ = std::make_unique<RegistrationBook>();
  thread_ = std::thread([this] { Loop(); });
  started_ = true;
  return "";
}

void Engine::Shutdown() {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (!started_ || shutdown_requested_) return;
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
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
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
  Request req{std::chrono::steady_clock::now(), handles_.Allocate(std::move(on_done)), spec,
              input, output};
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

void Engine::Loop() {
  pthread_setname_np(pthread_self(), "wagma-engine");  // findable in top / /proc
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_progress = Clock::now();
  while (true) {
    bool progressed = false;
    try {
      progressed |= DrainRequests();
      progressed |= PollControl();
      progressed |= ProgressRounds();
      progressed |= JoinActivatedRounds();
      channel_->FlushSends();
      if (shutdown_requested_ && ShutdownStep()) break;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[horovod_wagma rank %d] engine error: %s\n", rank_, e.what());
      handles_.FailAll(std::string("WAGMA engine error: ") + e.what());
      break;
    }
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.loop_iterations;
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
    const auto idle_us =
        std::chrono::duration_cast<std::chrono::microseconds>(now - last_progress).count();
    // While rounds are in flight, peers' messages (and rendezvous hand-shakes of large
    // ones) need this thread promptly: spin longer before sleeping.
    if (idle_us < (in_flight_ > 0 ? 25 * spin_us_ : spin_us_)) {
      std::this_thread::yield();
      continue;
    }
    const int64_t cap_us = in_flight_ > 0 ? 200 : (idle_us > 2000000 ? 4000 : 1000);
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
        OnActivate(msg.stream_id, msg.round);
        break;
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
      rs.reduction.reset();
      rs.completed = true;
      --in_flight_;
      any = true;
      {
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.rounds_completed;
      }
      if (rs.call) FinishAppRound(s, round);
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
      auto existing = s.rounds.find(round);
      if (existing != s.rounds.end() && existing->second.joined) {
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
      RoundState& rs = GetRound(s, round);
      rs.passive_contribution = pool_.Copy(s.published, s.spec.num_bytes());
      Join(s, rs, rs.passive_contribution.data(), /*activate=*/false);
      s.activations.erase(s.activations.begin());
      {
        // The published value belongs to round published_version / 2 (its input or
        // output); an output of round r - 1 is fresh (0 rounds stale).
        const int64_t staleness = std::max<int64_t>(0, round - 1 - s.published_version / 2);
        std::lock_guard<std::mutex> lock(stats_mu_);
        ++stats_.passive_joins;
        stats_.staleness_sum += staleness;
        stats_.staleness_max = std::max(stats_.staleness_max, staleness);
      }
      any = true;
    }
  }
  return any;
}

bool Engine::ShutdownStep() {
  if (shutdown_state_ == ShutdownState::kDrain && shutdown_started_.time_since_epoch().count() == 0)
    shutdown_started_ = std::chrono::steady_clock::now();
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
  if (shutdown_requested_) {
    handles_.Complete(req.handle, "the WAGMA engine is shutting down");
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
                                      req.spec.name + "'");
    return;
  }
  auto it = streams_.find(req.spec.name);
  if (it == streams_.end()) {
    Stream& s = streams_[req.spec.name];
    s.spec = req.spec;
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
    const std::string mismatch =
        it->second.spec.Mismatch("its round 0", req.spec, "this call");
    if (!mismatch.empty()) {
      handles_.Complete(req.handle, "a stream cannot change after round 0: " + mismatch);
      return;
    }
  }
  Stream& s = it->second;
  if (!s.error.empty()) {
    handles_.Complete(req.handle, s.error);
    return;
  }
  const int64_t round = s.next_app_round++;
  RoundState& rs = GetRound(s, round);
  rs.call = AppCall{req.enqueued, req.handle, req.input, req.output};
  if (s.id >= 0) EnterRound(s, rs);
}

void Engine::OnRegister(int source, const StreamSpec& spec) {
  for (const RegistrationBook::Verdict& v : book_->Add(source, spec)) {
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
}

void Engine::OnReject(const std::string& name, const std::string& error) {
  auto it = streams_.find(name);
  if (it == streams_.end()) return;
  FailStream(it->second, error);
}

void Engine::FailStream(Stream& s, const std::string& error) {
  s.error = error;
  for (auto& kv : s.rounds) {
    if (kv.second.call) handles_.Complete(kv.second.call->handle, error);
  }
  s.rounds.clear();
}

void Engine::OnActivate(int stream_id, int64_t round) {
  auto it = streams_by_id_.find(stream_id);
  if (it == streams_by_id_.end()) {
    std::fprintf(stderr, "[horovod_wagma rank %d] activation for unknown stream %d ignored\n",
                 rank_, stream_id);
    return;
  }
  Stream& s = *it->second;
  auto r = s.rounds.find(round);
  if (r != s.rounds.end() ? r->second.joined : round < s.next_app_round) {
    return;  // joined already; rounds the app entered and collected are forgotten
  }
  s.activations.insert(round);
}

// ---------------------------------------------------------------------------------
// Rounds

RoundState& Engine::GetRound(Stream& s, int64_t round) {
  auto it = s.rounds.find(round);
  if (it != s.rounds.end()) return it->second;
  RoundState& rs = s.rounds[round];
  rs.round = round;
  rs.plan = PlanRound(round, s.spec.config.sync_period, s.schedule->num_phases());
  // The schedule is over positions in the process set; members are world ranks.
  if (rs.plan.global) {
    rs.members = s.spec.members;
  } else {
    for (int index : s.schedule->GroupOf(rs.plan.phase, s.my_index))
      rs.members.push_back(s.spec.members[index]);
  }
  for (size_t i = 0; i < rs.members.size(); ++i)
    if (rs.members[i] == rank_) rs.my_index = static_cast<int>(i);
  return rs;
}

void Engine::EnterRound(Stream& s, RoundState& rs) {
  Publish(s, rs.call->input, 2 * rs.round, /*copy=*/false);
  if (rs.completed) {
    FinishAppRound(s, rs.round);
  } else if (!rs.joined) {
    const bool activate = !rs.plan.global && s.spec.config.wait_avoiding;
    Join(s, rs, rs.call->input, activate);
  }
}

void Engine::Join(Stream& s, RoundState& rs, const void* contribution, bool activate) {
  rs.joined = true;
  rs.contribution = contribution;
  if (activate) {
    for (int m : rs.members) {
      if (m == rank_) continue;
      ControlMessage msg;
      msg.kind = ControlKind::kActivate;
      msg.stream_id = s.id;
      msg.round = rs.round;
      channel_->Send(m, msg);
    }
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.activations_sent += static_cast<int64_t>(rs.members.size()) - 1;
  }
  ReductionArgs args;
  args.comm = data_comm_;
  args.tag = DataTag(s.id, rs.round);
  args.members = rs.members;
  args.my_index = rs.my_index;
  args.dtype = s.spec.dtype;
  args.count = s.spec.num_elements();
  args.contribution = contribution;
  // The app's own contribution under the plain mean (global rounds, or 'fresh' with
  // c = x) makes m the answer: reduce straight into the output, no extra pass.
  rs.mean_in_output = rs.call && contribution == rs.call->input &&
                      (rs.plan.global || s.spec.config.averaging == Averaging::kFresh);
  if (rs.mean_in_output) {
    args.result = rs.call->output;
  } else {
    rs.mean = pool_.Take(s.spec.num_bytes());
    args.result = rs.mean.data();
  }
  args.pool = &pool_;
  rs.reduction = MakeGroupReduction(std::move(args), small_bytes_);
  rs.reduction->Start();
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.bytes_sent += static_cast<int64_t>(rs.reduction->BytesSent());
  }
  ++in_flight_;
}

void Engine::FinishAppRound(Stream& s, int64_t round) {
  RoundState& rs = s.rounds.at(round);
  AppCall& call = *rs.call;
  const size_t n = s.spec.num_elements();
  const size_t bytes = s.spec.num_bytes();
  const int g = static_cast<int>(rs.members.size());
  char* out = static_cast<char*>(call.output);
  const void* x = call.input;
  if (rs.mean_in_output) {
    // already there
  } else if (rs.plan.global) {
    std::memcpy(out, rs.mean.data(), bytes);
  } else if (s.spec.config.averaging == Averaging::kPaper) {
    PaperAverage(s.spec.dtype, rs.mean.data(), x, g, n, out);
  } else if (rs.contribution == x || std::memcmp(rs.contribution, x, bytes) == 0) {
    std::memcpy(out, rs.mean.data(), bytes);  // c == x: the plain group mean
  } else {
    FreshCorrection(s.spec.dtype, rs.mean.data(), rs.contribution, x, g, n, out);
  }
  // Without wait-avoidance nobody ever reads the published value.
  if (s.spec.config.wait_avoiding) Publish(s, out, 2 * round + 1, /*copy=*/true);
  const int64_t handle = call.handle;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.call_wait_us += std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now() - call.enqueued).count();
  }
  s.rounds.erase(round);
  handles_.Complete(handle);
}

void Engine::Publish(Stream& s, const void* value, int64_t version, bool copy) {
  if (version <= s.published_version) return;
  s.published_version = version;
  if (!copy) {
    s.published = value;
    return;
  }
  if (s.published_copy.empty()) s.published_copy = pool_.Take(s.spec.num_bytes());
  std::memcpy(s.published_copy.data(), value, s.spec.num_bytes());
  s.published = s.published_copy.data();
}

}  // namespace wagma
