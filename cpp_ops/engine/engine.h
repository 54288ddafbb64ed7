// Engine: the process-wide WAGMA engine. App threads enqueue requests and receive
// handles; one background thread owns all of the engine's MPI traffic.
//
//   Enqueue -> request queue -> background loop (control messages, reductions,
//   activations) -> output written -> handle completed -> Poll / Wait.
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
#include "registration_book.h"
#include "stream_state.h"

namespace wagma {

struct EngineStats {
  int64_t rounds_completed = 0;
  int64_t passive_joins = 0;
  int64_t activations_sent = 0;
  int64_t loop_iterations = 0;
  int64_t sleeps = 0;
  int64_t bytes_sent = 0;  // reduction payload
  // Passive joins: how many rounds old the contributed (published) value was.
  int64_t staleness_sum = 0;
  int64_t staleness_max = 0;
  int64_t call_wait_us = 0;  // app calls: enqueue to completion, summed
};

class Engine {
 public:
  static Engine& Get();

  // Collective over MPI_COMM_WORLD (duplicates communicators). Idempotent. Returns an
  // error text, empty on success. MPI must already be initialised, thread-multiple.
  std::string Start();
  // Completes what can be completed, then stops the background thread. Idempotent.
  void Shutdown();
  bool started() const { return started_.load(); }
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Returns a handle > 0, or 0 with *error set. `input` and `output` (which may be the
  // same buffer) must stay valid, and the input unchanged, until the handle completes.
  int64_t Enqueue(const StreamSpec& spec, const void* input, void* output, std::string* error,
                  HandleTable::Callback on_done = nullptr);
  int Poll(int64_t handle) { return handles_.Poll(handle); }
  std::string Wait(int64_t handle) { return handles_.WaitAndRelease(handle); }
  EngineStats stats();

  const GroupSchedule& ScheduleFor(int num_ranks, int group_size);

 private:
  Engine() : pool_(size_t(1) << 30) {}
  struct Request {
    std::chrono::steady_clock::time_point enqueued;
    int64_t handle;
    StreamSpec spec;
    const void* input;
    void* output;
  };

  void Loop();
  bool DrainRequests();
  bool PollControl();
  bool ProgressRounds();
  bool JoinActivatedRounds();
  bool ShutdownStep();

  void HandleRequest(Request req);
  void OnRegister(int source, const StreamSpec& spec);
  void OnAssign(const std::string& name, int stream_id);
  void OnReject(const std::string& name, const std::string& error);
  void OnActivate(int stream_id, int64_t round);

  RoundState& GetRound(Stream& s, int64_t round);
  void EnterRound(Stream& s, RoundState& rs);
  void Join(Stream& s, RoundState& rs, const void* contribution, bool activate);
  // Writes the app's output, publishes it, completes the handle, forgets the round.
  void FinishAppRound(Stream& s, int64_t round);
  // By reference for app inputs, by copy for outputs (see stream_state.h).
  void Publish(Stream& s, const void* value, int64_t version, bool copy);
  void FailStream(Stream& s, const std::string& error);

  std::atomic<bool> started_{false};
  std::atomic<bool> shutdown_requested_{false};
  std::mutex start_mu_;
  std::thread thread_;
  int rank_ = 0, size_ = 1;
  MPI_Comm control_comm_ = MPI_COMM_NULL;
  MPI_Comm data_comm_ = MPI_COMM_NULL;
  std::unique_ptr<ActivationChannel> channel_;
  std::unique_ptr<RegistrationBook> book_;  // registrar (world rank 0) only
  size_t small_bytes_ = 64 * 1024;
  double shutdown_timeout_s_ = 30.0;
  int64_t spin_us_ = 200;  // after activity, poll this long before sleeping

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
  int64_t in_flight_ = 0;
  enum class ShutdownState { kDrain, kBarrier, kFinal };
  ShutdownState shutdown_state_ = ShutdownState::kDrain;
  MPI_Request shutdown_barrier_ = MPI_REQUEST_NULL;
  std::chrono::steady_clock::time_point shutdown_started_;

  std::mutex stats_mu_;
  EngineStats stats_;
};

}  // namespace wagma
