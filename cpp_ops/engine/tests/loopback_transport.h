// LoopbackTransport: N ranks in one process over in-memory queues, for the engine's
// unit tests (`make engine-unit-test`). It keeps the contract of transport.h:
//  * data: a send is buffered and completes at once; a receive completes when a
//    message from its peer with its tag has arrived, and messages of one (source,
//    destination, tag) are matched in the order they were sent;
//  * control: a send copies its bytes; a receive takes the oldest arrived message;
//  * the collectives (AllreduceMinMax, the barrier) meet every rank: call them from
//    one thread per rank (RunRanks), as the ranks of a real job would.
// A receive whose message has another size than the one posted is recorded as a
// mismatch (size_mismatches()), a bug in the reduction under test.
// Every rank's sends are traced per step (between Clear() calls) for tests that check
// what went on the wire.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "transport/transport.h"

namespace wagma {
namespace loopback {

// What one rank sent: per step (between Clear() calls), the bytes of each data send.
struct Trace {
  std::vector<std::vector<size_t>> steps;
};

class Network {
 public:
  // `node_of[r]`: the node rank r runs on (RemoteRanks); empty: one node.
  explicit Network(int size, std::vector<int> node_of = {})
      : size_(size), node_of_(node_of.empty() ? std::vector<int>(size, 0) : node_of),
        traces_(size), control_(size) {}
  int size() const { return size_; }
  const Trace& trace(int rank) const { return traces_[rank]; }
  Trace& trace(int rank) { return traces_[rank]; }
  int size_mismatches() const { return size_mismatches_; }
  bool remote(int a, int b) const { return node_of_[a] != node_of_[b]; }

  void Send(int from, int to, int tag, const void* buf, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    const char* p = static_cast<const char*>(buf);
    data_[{from, to, tag}].emplace_back(p, p + bytes);
    traces_[from].steps.back().push_back(bytes);
  }
  // Takes the oldest message of (from, to, tag) into buf; false if none has arrived.
  bool Receive(int from, int to, int tag, void* buf, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto& q = data_[{from, to, tag}];
    if (q.empty()) return false;
    if (q.front().size() != bytes) {
      ++size_mismatches_;
    } else if (bytes > 0) {
      std::memcpy(buf, q.front().data(), bytes);
    }
    q.pop_front();
    return true;
  }
  void NewStep(int rank) {
    std::lock_guard<std::mutex> lock(mu_);
    traces_[rank].steps.emplace_back();
  }
  // Messages sent and not received, over every queue.
  size_t InFlight() {
    std::lock_guard<std::mutex> lock(mu_);
    size_t n = 0;
    for (auto& q : data_) n += q.second.size();
    return n;
  }

  void SendControl(int from, int to, int tag, std::string bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    control_[to].push_back({from, tag, std::move(bytes)});
  }
  bool ReceiveControl(int to, int* from, int* tag, std::string* bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (control_[to].empty()) return false;
    *from = control_[to].front().from;
    *tag = control_[to].front().tag;
    *bytes = std::move(control_[to].front().bytes);
    control_[to].pop_front();
    return true;
  }

  // Blocks until every rank has called it, then gives each the element-wise min and max.
  void AllreduceMinMax(const int64_t* values, int64_t* min, int64_t* max, int n) {
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t generation = generation_;
    if (arrived_ == 0) {
      min_.assign(values, values + n);
      max_.assign(values, values + n);
    } else {
      for (int i = 0; i < n; ++i) {
        min_[i] = std::min(min_[i], values[i]);
        max_[i] = std::max(max_[i], values[i]);
      }
    }
    if (++arrived_ == size_) {
      arrived_ = 0;
      ++generation_;
      result_min_ = min_;
      result_max_ = max_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
    std::copy(result_min_.begin(), result_min_.begin() + n, min);
    std::copy(result_max_.begin(), result_max_.begin() + n, max);
  }
  void EnterBarrier() {
    std::lock_guard<std::mutex> lock(mu_);
    ++barrier_entered_;
  }
  bool BarrierDone() {
    std::lock_guard<std::mutex> lock(mu_);
    return barrier_entered_ >= size_;
  }

 private:
  struct ControlMessage {
    int from;
    int tag;
    std::string bytes;
  };
  int size_;
  std::vector<int> node_of_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::tuple<int, int, int>, std::deque<std::vector<char>>> data_;
  std::vector<Trace> traces_;
  std::vector<std::deque<ControlMessage>> control_;
  int size_mismatches_ = 0;
  int arrived_ = 0;
  int64_t generation_ = 0;
  std::vector<int64_t> min_, max_, result_min_, result_max_;
  int barrier_entered_ = 0;
};

class Requests : public RequestList {
 public:
  Requests(Network* net, int me) : net_(net), me_(me) { net_->NewStep(me_); }
  void PostReceive(void* buf, size_t bytes, int peer, int tag) override {
    receives_.push_back({buf, bytes, peer, tag, false});
  }
  void PostSend(const void* buf, size_t bytes, int peer, int tag) override {
    net_->Send(me_, peer, tag, buf, bytes);
  }
  bool Done() override {
    // In posting order, and never past an earlier receive of the same (peer, tag)
    // still pending: the messages of a (source, tag) go to its receives in order,
    // even while another rank's thread sends meanwhile.
    bool all = true;
    std::vector<std::pair<int, int>> waiting;
    for (Receive& r : receives_) {
      const std::pair<int, int> key{r.peer, r.tag};
      const bool behind = std::find(waiting.begin(), waiting.end(), key) != waiting.end();
      if (!r.done && !behind) r.done = net_->Receive(r.peer, me_, r.tag, r.buf, r.bytes);
      if (!r.done) waiting.push_back(key);
      all = all && r.done;
    }
    return all;
  }
  void Clear() override {
    receives_.clear();
    net_->NewStep(me_);
  }
  void CancelReceives() override { receives_.clear(); }
  std::vector<PendingMessage> Pending() override {
    std::vector<PendingMessage> out;
    for (const Receive& r : receives_)
      if (!r.done) out.push_back({r.peer, true});
    return out;
  }

 private:
  struct Receive {
    void* buf;
    size_t bytes;
    int peer;
    int tag;
    bool done;
  };
  Network* net_;
  int me_;
  std::vector<Receive> receives_;
};

class LoopbackTransport : public Transport {
 public:
  LoopbackTransport(Network* net, int rank) : net_(net), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return net_->size(); }
  std::unique_ptr<RequestList> NewRequestList() override {
    return std::make_unique<Requests>(net_, rank_);
  }
  void SendControl(int dest, int tag, std::string bytes) override {
    net_->SendControl(rank_, dest, tag, std::move(bytes));
  }
  bool ReceiveControl(int* source, int* tag, std::string* bytes) override {
    return net_->ReceiveControl(rank_, source, tag, bytes);
  }
  bool FlushControl() override { return true; }
  std::vector<bool> RemoteRanks() override {
    std::vector<bool> out(net_->size());
    for (int r = 0; r < net_->size(); ++r) out[r] = net_->remote(rank_, r);
    return out;
  }
  void AllreduceMinMax(const int64_t* values, int64_t* min, int64_t* max, int n) override {
    net_->AllreduceMinMax(values, min, max, n);
  }
  void StartBarrier() override { net_->EnterBarrier(); }
  bool BarrierDone() override { return net_->BarrierDone(); }
  void Close() override {}

 private:
  Network* net_;
  int rank_;
};

// Runs body(rank) on one thread per rank and joins them: for the collectives.
inline void RunRanks(int size, const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
}

}  // namespace loopback
}  // namespace wagma
