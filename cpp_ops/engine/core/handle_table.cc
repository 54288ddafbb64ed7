#include "core/handle_table.h"

#include <chrono>
#include <thread>
#include <vector>

#include "observe/timeline.h"

namespace wagma {

int64_t HandleTable::Allocate(Callback on_done) {
  int64_t h;
  std::string error;
  {
    std::lock_guard<std::mutex> lock(mu_);
    h = next_++;
    State& s = states_[h];
    s.on_done = std::move(on_done);
    if (!closed_) return h;
    error = closed_error_;
  }
  Complete(h, error);
  return h;
}

void HandleTable::Complete(int64_t handle, const std::string& error,
                           const std::string& stream, bool global, int64_t round) {
  Callback on_done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = states_.find(handle);
    if (it == states_.end() || it->second.done) return;
    if (it->second.on_done) {
      on_done = std::move(it->second.on_done);
      states_.erase(it);
    } else {
      State& s = it->second;
      s.done = true;
      s.outcome.error = error;
      s.outcome.stream = stream;
      s.outcome.global = global;
      s.outcome.round = round;
    }
  }
  if (on_done) {
    on_done(error, round);  // outside the lock: it may enqueue more work
  } else {
    cv_.notify_all();
  }
}

int HandleTable::Poll(int64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = states_.find(handle);
  if (it == states_.end()) return -1;
  return it->second.done ? 1 : 0;
}

int HandleTable::WaitFor(int64_t handle, int64_t timeout_us, Outcome* out) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point t0 = Clock::now();
  const int64_t t0_us = Timeline::NowUs();
  // Small rounds finish within microseconds: poll briefly (yielding) before paying
  // for a sleep and a wake-up.
  const auto spin_until = t0 + std::chrono::microseconds(100);
  while (Clock::now() < spin_until) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = states_.find(handle);
      if (it == states_.end() || it->second.done) break;
    }
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(mu_);
  auto it = states_.find(handle);
  if (it == states_.end()) return -1;
  State& s = it->second;
  if (!s.done) {
    // `s` stays valid while waiting (references survive rehashing; only this waiter
    // erases a handle without a callback), unlike `it`.
    auto ready = [&] { return s.done; };
    if (timeout_us < 0) {
      cv_.wait(lock, ready);
    } else {
      cv_.wait_for(lock, std::chrono::microseconds(timeout_us), ready);
    }
  }
  if (s.outcome.first_wait_at_us == 0) s.outcome.first_wait_at_us = t0_us;
  s.outcome.waited_us +=
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count();
  if (!s.done) return 0;
  *out = std::move(s.outcome);
  states_.erase(handle);
  return 1;
}

void HandleTable::Close(const std::string& error) {
  std::vector<int64_t> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!closed_) {
      closed_ = true;
      closed_error_ = error;
    }
    for (auto& kv : states_)
      if (!kv.second.done) pending.push_back(kv.first);
  }
  for (int64_t h : pending) Complete(h, error);
}

size_t HandleTable::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return states_.size();
}

}  // namespace wagma
