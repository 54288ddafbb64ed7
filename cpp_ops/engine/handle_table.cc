#include "handle_table.h"

#include <chrono>
#include <thread>
#include <vector>

namespace wagma {

int64_t HandleTable::Allocate(Callback on_done) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t h = next_++;
  states_[h] = State{false, "", std::move(on_done)};
  return h;
}

void HandleTable::Complete(int64_t handle, const std::string& error) {
  Callback on_done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = states_.find(handle);
    if (it == states_.end() || it->second.done) return;
    if (it->second.on_done) {
      on_done = std::move(it->second.on_done);
      states_.erase(it);
    } else {
      it->second.done = true;
      it->second.error = error;
    }
  }
  if (on_done) {
    on_done(error);  // outside the lock: it may enqueue more work
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

std::string HandleTable::WaitAndRelease(int64_t handle) {
  // Small rounds finish within microseconds: poll briefly (yielding) before paying
  // for a sleep and a wake-up.
  const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  while (std::chrono::steady_clock::now() < spin_until) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = states_.find(handle);
      if (it == states_.end() || it->second.done) break;
    }
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(mu_);
  auto it = states_.find(handle);
  if (it == states_.end()) return "unknown handle " + std::to_string(handle);
  cv_.wait(lock, [&] { return states_[handle].done; });
  std::string error = states_[handle].error;
  states_.erase(handle);
  return error;
}

void HandleTable::FailAll(const std::string& error) {
  std::vector<int64_t> pending;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& kv : states_)
      if (!kv.second.done) pending.push_back(kv.first);
  }
  for (int64_t h : pending) Complete(h, error);
}

}  // namespace wagma
