// HandleTable: the app's view of enqueued requests. The background loop completes a
// handle (after writing its output); app threads poll or wait on it, or, for handles
// allocated with a callback (TensorFlow's async kernels), the callback runs once on
// completion, on the engine thread, and the handle is forgotten.
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
  using Callback = std::function<void(const std::string& error)>;
  int64_t Allocate(Callback on_done = nullptr);
  void Complete(int64_t handle, const std::string& error = "");
  // -1 unknown handle, 0 pending, 1 done.
  int Poll(int64_t handle);
  // Waits for completion; returns the error text (empty on success) and forgets the
  // handle. Returns "unknown handle" for a handle never issued or already waited on.
  std::string WaitAndRelease(int64_t handle);
  // Fails every pending handle, e.g. at shutdown.
  void FailAll(const std::string& error);

 private:
  struct State {
    bool done = false;
    std::string error;
    Callback on_done;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<int64_t, State> states_;
  int64_t next_ = 1;
};

}  // namespace wagma
