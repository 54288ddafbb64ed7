#include "core/request_queue.h"

namespace wagma {

void RequestQueue::Push(EngineRequest request) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(request));
  }
  cv_.notify_one();
}

std::deque<EngineRequest> RequestQueue::TakeAll() {
  std::deque<EngineRequest> batch;
  std::lock_guard<std::mutex> lock(mu_);
  batch.swap(queue_);
  return batch;
}

size_t RequestQueue::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void RequestQueue::WaitFor(std::chrono::microseconds timeout,
                           const std::function<bool()>& wake) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty() || wake(); });
}

void RequestQueue::Notify() {
  std::lock_guard<std::mutex> lock(mu_);  // no lost wake-up: see WaitFor
  cv_.notify_one();
}

int JoinSlot::Wait(int64_t timeout_us, std::string* error,
                   const std::function<std::string()>& start) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!requested_) {
    const std::string start_error = start();
    if (!start_error.empty()) {
      *error = start_error;
      return -1;
    }
    requested_ = true;
    result_ = -2;
    error_.clear();
  }
  auto done = [this] { return result_ != -2 || !error_.empty(); };
  if (timeout_us < 0) {
    cv_.wait(lock, done);
  } else {
    cv_.wait_for(lock, std::chrono::microseconds(timeout_us), done);
  }
  if (!done()) return -2;
  requested_ = false;
  if (!error_.empty()) {
    *error = error_;
    return -1;
  }
  return result_;
}

void JoinSlot::Finish(int last_rank, const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The first outcome stands until the waiter takes it: a failed engine finishes the
    // join with its error (a membership verdict), then its loop's exit finishes it
    // again with "shut down", which must not replace the reason.
    if (!requested_ || result_ != -2 || !error_.empty()) return;
    result_ = error.empty() ? last_rank : -2;
    error_ = error;
  }
  cv_.notify_all();
}

}  // namespace wagma
