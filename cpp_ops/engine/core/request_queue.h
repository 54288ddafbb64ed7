// RequestQueue and JoinSlot: where app threads hand work to the engine.
//
// App threads push requests (an op call, or join()) and return at once; the engine
// takes them all at the start of each pass. The queue's condition variable is also
// what the idle engine thread sleeps on, so a new request wakes it at once.
//
// JoinSlot holds the one join() in progress: the app thread that started it waits
// there (in slices), the engine completes it once every rank has joined, or fails it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

#include "core/stream_spec.h"

namespace wagma {

struct EngineRequest {
  enum class Kind { kRound, kJoin } kind = Kind::kRound;
  std::chrono::steady_clock::time_point enqueued;
  int64_t enqueued_us = 0;  // Timeline clock
  int64_t handle = 0;
  StreamSpec spec;
  const void* input = nullptr;
  void* output = nullptr;
  bool has_callback = false;
};

class RequestQueue {
 public:
  void Push(EngineRequest request);
  std::deque<EngineRequest> TakeAll();
  size_t size();
  // Sleeps up to `timeout`, until a request is queued or `wake()` holds (checked
  // under the queue's lock, so a Notify() after the condition changed is not lost).
  void WaitFor(std::chrono::microseconds timeout, const std::function<bool()>& wake);
  // Wakes a sleeper whose `wake` condition may have changed.
  void Notify();
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<EngineRequest> queue_;
};

class JoinSlot {
 public:
  // Waits up to timeout_us (< 0: no limit) for the join in progress; when there is
  // none, `start` begins one first (it returns "" or an error, which fails this
  // call). Returns the last rank to join, -2 still waiting, or -1 with *error set.
  int Wait(int64_t timeout_us, std::string* error, const std::function<std::string()>& start);
  // Engine side: every rank joined (error empty), or the join failed.
  void Finish(int last_rank, const std::string& error);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false;
  int result_ = -2;
  std::string error_;
};

}  // namespace wagma
