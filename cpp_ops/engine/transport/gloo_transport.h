// GlooTransport: Transport over Gloo's TCP pairs (horovodrun --gloo, Horovod elastic).
//
// Gloo is the library Horovod's own Gloo controller uses; this engine links a private,
// static copy (scripts/build_gloo.sh). Every rank connects to every other through
// Gloo's full-mesh rendezvous, over a key-value store the launcher runs (horovodrun's
// rendezvous server; RendezvousStore carries its get/set).
//
// How the Transport contract maps onto Gloo's unbound buffers, whose (peer, slot)
// queues match sends and receives in posting order:
//  * data: a message with tag t travels on slot kDataSlot(t): Gloo's per-slot order
//    is the per-tag order the reductions rely on. A receive lands in staging memory the
//    transport owns and is copied into the caller's buffer when the step completes, so
//    that CancelReceives returns at once: Gloo cannot take back a receive it has
//    announced to the sender, whose message may still come.
//  * control: one receive of kControlFrame bytes stays posted per peer on one slot; a
//    message is framed (tag, length) and, when longer than a frame, continues in
//    further frames from the same peer, which arrive in order.
//  * Sends and receives that a list gives up on before they complete move to a
//    `Parked` list that keeps their Gloo buffers (and staging memory) alive until
//    Gloo is done with them: destroying a buffer Gloo still refers to wedges the pair.
//  * Completion is tested without blocking (PollableBuffer): Gloo's own waits throw,
//    and close every pair, when they time out.
//  * A peer's failure (its socket closed) is reported by LostPeers(); operations with
//    it never complete (as on MPI, where the engine gives them up), and sends to it
//    are dropped.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace gloo {
namespace rendezvous {
class Context;
}
}  // namespace gloo

namespace wagma {

// The key-value store Gloo's rendezvous reads and writes (horovodrun's rendezvous
// server, reached from Python). `get` blocks until the key exists or the timeout ends.
struct RendezvousStore {
  std::function<void(const std::string& key, const std::vector<char>& value)> set;
  std::function<std::vector<char>(const std::string& key)> get;
};

struct GlooSpec {
  int rank = 0;
  int size = 1;
  std::string hostname;  // this rank's host as the launcher names it (node grouping)
  std::string iface;     // network interface to bind (horovodrun's HOROVOD_GLOO_IFACE)
  std::string prefix;    // key prefix in the store: one per engine start
  std::chrono::milliseconds timeout{30000};  // rendezvous and start-up collectives
  RendezvousStore store;
};

class GlooTransport : public Transport {
 public:
  // Collective over the spec's `size` ranks. Returns "" and sets *out, or an error.
  static std::string Create(const GlooSpec& spec, std::unique_ptr<Transport>* out);
  ~GlooTransport() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<RequestList> NewRequestList() override;
  void SendControl(int dest, int tag, std::string bytes) override;
  bool ReceiveControl(int* source, int* tag, std::string* bytes) override;
  bool FlushControl() override;
  std::vector<bool> RemoteRanks() override { return remote_; }
  void AllreduceMinMax(const int64_t* values, int64_t* min, int64_t* max, int n) override;
  void StartBarrier() override;
  bool BarrierDone() override;
  void Close() override;
  std::vector<int> LostPeers() override;
  std::string PeerNote(int peer) override;
  bool ProgressesOnItsOwn() const override { return true; }

  struct State;  // Gloo objects, kept out of this header

 private:
  GlooTransport();
  void PostControlReceive(int peer);
  int rank_ = 0, size_ = 1;
  std::vector<bool> remote_;
  std::unique_ptr<State> state_;
};

}  // namespace wagma
