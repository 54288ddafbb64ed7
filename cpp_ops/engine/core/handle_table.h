// HandleTable: the app's view of enqueued requests. The background loop completes a
// handle (after writing its output); app threads poll or wait on it, or, for handles
// allocated with a callback (TensorFlow's async kernels), the callback runs once on
// completion, on the engine thread (on the allocating thread once the table is
// closed), and the handle is forgotten.
//
// Waits take a timeout so that bindings can return to their interpreter between
// slices (Python must see Ctrl-C while a round waits for a stuck peer).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

namespace wagma {

class HandleTable {
 public:
  // `round`: the round that served the call (-1 when it failed).
  using Callback = std::function<void(const std::string& error, int64_t round)>;
  // What the app learns when a wait ends; `waited_us` sums every slice spent blocked.
  struct Outcome {
    std::string error;
    std::string stream;
    bool global = false;
    int64_t round = -1;
    int64_t waited_us = 0;
    int64_t first_wait_at_us = 0;  // Timeline clock, when the app started waiting
  };

  int64_t Allocate(Callback on_done = nullptr);
  // `stream`, `global` and `round` label the outcome for statistics and the timeline.
  void Complete(int64_t handle, const std::string& error = "", const std::string& stream = "",
                bool global = false, int64_t round = -1);
  // -1 unknown handle, 0 pending, 1 done.
  int Poll(int64_t handle);
  // Waits up to timeout_us (< 0: no limit). On completion fills *out, forgets the
  // handle and returns 1; returns 0 on timeout; -1 for a handle never issued or
  // already waited on.
  int WaitFor(int64_t handle, int64_t timeout_us, Outcome* out);
  // Fails every pending handle and every handle allocated later, with `error`: the
  // engine failed or shut down, and no loop will complete them (a request enqueued
  // after that would otherwise wait forever). A later Close keeps the first error.
  void Close(const std::string& error);
  size_t pending() const;

 private:
  struct State {
    bool done = false;
    Callback on_done;
    Outcome outcome;
  };
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<int64_t, State> states_;
  int64_t next_ = 1;
  bool closed_ = false;
  std::string closed_error_;
};

}  // namespace wagma
