#include "transport/gloo_transport.h"

#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/tcp/unbound_buffer.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <list>
#include <stdexcept>
#include <thread>

namespace wagma {
namespace {

namespace tcp = gloo::transport::tcp;

// Slots: Gloo's own collectives use prefixes 0x01-0x08 in the top byte.
constexpr uint64_t kSlotBase = 0xA7ULL << 56;
uint64_t DataSlot(int tag) { return kSlotBase | (1ULL << 40) | static_cast<uint32_t>(tag); }
constexpr uint64_t kControlSlot = kSlotBase | (2ULL << 40);
// Tags of the Gloo collectives this transport runs (their slots carry Gloo's prefixes).
constexpr uint32_t kMinMaxTag = 0xA701, kBarrierTag = 0xA702;
// Control frames: the first carries a header (tag, total length), then the payload;
// longer messages continue in raw frames. Most control messages are tens of bytes.
constexpr size_t kControlFrame = 16384;
constexpr size_t kHeader = 8;

// A tcp::UnboundBuffer whose completions can be tested without blocking (Gloo's own
// waits throw, and close every pair, when their timeout runs out).
class PollableBuffer : public tcp::UnboundBuffer {
 public:
  using tcp::UnboundBuffer::UnboundBuffer;
  // Takes one completed receive (send); throws the pair's error once none is left (a
  // message that arrived before its peer's socket closed is still delivered).
  bool TakeRecv() { return Take(&recvCompletions_); }
  bool TakeSend() { return Take(&sendCompletions_); }
  bool Failed() {
    std::lock_guard<std::mutex> lock(m_);
    return ex_ != nullptr;
  }

 private:
  bool Take(int* completions) {
    std::lock_guard<std::mutex> lock(m_);
    if (*completions > 0) {
      --*completions;
      return true;
    }
    if (ex_) std::rethrow_exception(ex_);
    return false;
  }
};

// gloo::rendezvous::Context with access to its TCP context (to make PollableBuffers).
class MeshContext : public gloo::rendezvous::Context {
 public:
  using gloo::rendezvous::Context::Context;
  std::shared_ptr<tcp::Context> tcp_context() {
    return std::dynamic_pointer_cast<tcp::Context>(transportContext_);
  }
};

// Gloo's rendezvous store over the launcher's key-value store, under a prefix.
class PrefixedStore : public gloo::rendezvous::Store {
 public:
  PrefixedStore(const RendezvousStore& store, std::string prefix)
      : store_(store), prefix_(std::move(prefix)) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(prefix_ + key, data);
  }
  std::vector<char> get(const std::string& key) override { return store_.get(prefix_ + key); }
  void wait(const std::vector<std::string>& keys) override {
    for (const auto& k : keys) get(k);
  }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
    wait(keys);  // the store's get has its own timeout
  }

 private:
  const RendezvousStore& store_;
  std::string prefix_;
};

// One posted message: its Gloo buffer and, for a receive, the staging memory it lands
// in and where the bytes go once it has.
struct Op {
  std::unique_ptr<PollableBuffer> buf;
  int peer = -1;
  std::vector<char> staging;
  void* dest = nullptr;
  bool recv = false;
  bool done = false;
  // Tests without blocking; copies a completed receive into dest. Throws when the
  // peer's connection failed.
  bool Test() {
    if (done) return true;
    done = recv ? buf->TakeRecv() : buf->TakeSend();
    if (done && recv && dest && !staging.empty()) std::memcpy(dest, staging.data(), staging.size());
    return done;
  }
};

// Peers whose connection failed, in the order seen; shared by the transport and its
// request lists (which outlive neither, but hold it by pointer for simplicity).
class LostPeerList {
 public:
  void Add(int peer) {
    for (int p : peers_) {
      if (p == peer) return;
    }
    peers_.push_back(peer);
  }
  bool Has(int peer) const {
    for (int p : peers_) {
      if (p == peer) return true;
    }
    return false;
  }
  const std::vector<int>& peers() const { return peers_; }

 private:
  std::vector<int> peers_;
};

}  // namespace

struct GlooTransport::State {
  std::shared_ptr<LostPeerList> lost = std::make_shared<LostPeerList>();
  std::shared_ptr<MeshContext> mesh;
  std::shared_ptr<tcp::Context> tcp;
  // Operations given up on before Gloo finished them: kept alive until it has (or
  // until their pair failed), since Gloo still refers to their buffers.
  std::shared_ptr<std::list<Op>> parked = std::make_shared<std::list<Op>>();
  // Control plane: per peer, the posted frame receive and a message in reassembly.
  std::vector<std::unique_ptr<PollableBuffer>> control_recv;
  std::vector<std::vector<char>> control_frame;
  std::vector<std::string> partial;
  std::vector<size_t> partial_total;
  std::vector<int> partial_tag;
  int next_peer = 0;
  std::deque<Op> control_sends;  // frames in flight, each with its own bytes
  // Control frames sent to and received from each peer (PeerNote).
  std::vector<int64_t> frames_to, frames_from;
  std::thread barrier;
  // Shared with the barrier's thread, which may outlive this State (Close detaches a
  // barrier that a departed peer will never complete).
  std::shared_ptr<std::atomic<bool>> barrier_done = std::make_shared<std::atomic<bool>>(false);
  std::chrono::milliseconds timeout{30000};

  void Sweep() {
    for (auto it = parked->begin(); it != parked->end();) {
      bool finished = true;
      try {
        finished = it->buf->Failed() || it->Test();
      } catch (const std::exception&) {
        finished = true;
      }
      it = finished ? parked->erase(it) : std::next(it);
    }
  }
};

namespace {

class GlooRequestList : public RequestList {
 public:
  GlooRequestList(std::shared_ptr<tcp::Context> context, std::shared_ptr<std::list<Op>> parked,
                  std::shared_ptr<LostPeerList> lost)
      : context_(std::move(context)), parked_(std::move(parked)), lost_(std::move(lost)) {}
  ~GlooRequestList() override { ParkPending(/*receives_only=*/false); }

  void PostReceive(void* buf, size_t bytes, int peer, int tag) override {
    Op op;
    op.recv = true;
    op.peer = peer;
    op.dest = buf;
    op.staging.resize(bytes);
    op.buf = std::make_unique<PollableBuffer>(context_, op.staging.data(), bytes);
    Post(std::move(op), [&](PollableBuffer& b) { b.recv(peer, DataSlot(tag), 0, bytes); });
  }

  void PostSend(const void* buf, size_t bytes, int peer, int tag) override {
    Op op;
    op.peer = peer;
    op.buf = std::make_unique<PollableBuffer>(context_, const_cast<void*>(buf), bytes);
    Post(std::move(op), [&](PollableBuffer& b) { b.send(peer, DataSlot(tag), 0, bytes); });
  }

  // A message to or from a lost peer never completes, as on MPI: the engine learns
  // of the loss from LostPeers() and gives the reduction up.
  bool Done() override {
    bool all = true;
    for (Op& op : ops_) {
      bool done = false;
      try {
        done = op.Test();  // every op: copies what arrived
      } catch (const std::exception&) {
        lost_->Add(op.peer);
      }
      all = done && all;
    }
    return all;
  }

  void Clear() override { ops_.clear(); }

  void CancelReceives() override { ParkPending(/*receives_only=*/true); }

  std::vector<PendingMessage> Pending() override {
    std::vector<PendingMessage> out;
    for (Op& op : ops_) {
      bool done = false;
      try {
        done = op.Test();
      } catch (const std::exception&) {
        lost_->Add(op.peer);
      }
      if (!done) out.push_back({op.peer, op.recv});
    }
    return out;
  }

 private:
  // Posts op; on a peer already lost, Gloo throws: the op then stays pending for good
  // (its buffer was never handed to Gloo).
  template <typename Fn>
  void Post(Op op, Fn post) {
    try {
      post(*op.buf);
    } catch (const std::exception&) {
      lost_->Add(op.peer);
      op.peer = -1;  // never handed to Gloo: nothing to park
    }
    ops_.push_back(std::move(op));
  }

  void ParkPending(bool receives_only) {
    std::vector<Op> keep;
    for (Op& op : ops_) {
      if (op.done) continue;
      if (receives_only && !op.recv) {
        keep.push_back(std::move(op));
        continue;
      }
      if (op.peer < 0 || lost_->Has(op.peer)) continue;  // Gloo holds it no more
      op.dest = nullptr;  // a parked receive never writes to the caller's buffer
      parked_->push_back(std::move(op));
    }
    ops_.swap(keep);
  }

  std::shared_ptr<tcp::Context> context_;
  std::shared_ptr<std::list<Op>> parked_;
  std::shared_ptr<LostPeerList> lost_;
  std::vector<Op> ops_;
};

std::string HostOf(const std::vector<char>& v) { return std::string(v.begin(), v.end()); }

}  // namespace

GlooTransport::GlooTransport() : state_(new State()) {}

GlooTransport::~GlooTransport() { Close(); }

std::string GlooTransport::Create(const GlooSpec& spec, std::unique_ptr<Transport>* out) {
  std::unique_ptr<GlooTransport> t(new GlooTransport());
  State& s = *t->state_;
  t->rank_ = spec.rank;
  t->size_ = spec.size;
  s.timeout = spec.timeout;
  try {
    tcp::attr attr;
    if (!spec.iface.empty()) attr.iface = spec.iface;
    auto device = tcp::CreateDevice(attr);
    PrefixedStore store(spec.store, spec.prefix);
    // Which ranks share this rank's host, as the launcher names hosts.
    store.set("host/" + std::to_string(spec.rank),
              std::vector<char>(spec.hostname.begin(), spec.hostname.end()));
    t->remote_.assign(static_cast<size_t>(spec.size), false);
    for (int r = 0; r < spec.size; ++r) {
      if (r != spec.rank) {
        t->remote_[static_cast<size_t>(r)] =
            HostOf(store.get("host/" + std::to_string(r))) != spec.hostname;
      }
    }
    s.mesh = std::make_shared<MeshContext>(spec.rank, spec.size);
    s.mesh->setTimeout(spec.timeout);
    s.mesh->connectFullMesh(store, device);
    s.tcp = s.mesh->tcp_context();
    if (!s.tcp) return "Gloo's context is not a TCP context";
  } catch (const std::exception& e) {
    return std::string("Gloo rendezvous failed: ") + e.what();
  }
  const size_t P = static_cast<size_t>(spec.size);
  s.control_recv.resize(P);
  s.control_frame.assign(P, std::vector<char>(kControlFrame));
  s.partial.resize(P);
  s.partial_total.assign(P, 0);
  s.partial_tag.assign(P, 0);
  s.frames_to.assign(P, 0);
  s.frames_from.assign(P, 0);
  for (int peer = 0; peer < spec.size; ++peer) {
    if (peer != spec.rank) t->PostControlReceive(peer);
  }
  *out = std::move(t);
  return "";
}

void GlooTransport::PostControlReceive(int peer) {
  State& s = *state_;
  auto& buf = s.control_recv[static_cast<size_t>(peer)];
  if (!buf) {
    buf = std::make_unique<PollableBuffer>(s.tcp, s.control_frame[static_cast<size_t>(peer)].data(),
                                           kControlFrame);
  }
  buf->recv(peer, kControlSlot, 0, kControlFrame);
}

std::unique_ptr<RequestList> GlooTransport::NewRequestList() {
  state_->Sweep();
  return std::make_unique<GlooRequestList>(state_->tcp, state_->parked, state_->lost);
}

void GlooTransport::SendControl(int dest, int tag, std::string bytes) {
  State& s = *state_;
  if (s.lost->Has(dest)) return;  // gone: LostPeers() reports it
  const size_t total = bytes.size();
  size_t offset = 0;
  bool first = true;
  while (first || offset < total) {
    Op op;
    op.peer = dest;
    const size_t head = first ? kHeader : 0;
    const size_t n = std::min(total - offset, kControlFrame - head);
    op.staging.resize(head + n);
    if (first) {
      const int32_t t32 = tag;
      const uint32_t len = static_cast<uint32_t>(total);
      std::memcpy(op.staging.data(), &t32, 4);
      std::memcpy(op.staging.data() + 4, &len, 4);
    }
    std::memcpy(op.staging.data() + head, bytes.data() + offset, n);
    op.buf = std::make_unique<PollableBuffer>(s.tcp, op.staging.data(), op.staging.size());
    try {
      op.buf->send(dest, kControlSlot, 0, op.staging.size());
    } catch (const std::exception&) {
      s.lost->Add(dest);
      return;
    }
    s.control_sends.push_back(std::move(op));
    ++s.frames_to[static_cast<size_t>(dest)];
    offset += n;
    first = false;
  }
}

bool GlooTransport::ReceiveControl(int* source, int* tag, std::string* bytes) {
  State& s = *state_;
  for (int i = 0; i < size_; ++i) {
    const int peer = (s.next_peer + i) % size_;
    const size_t p = static_cast<size_t>(peer);
    if (peer == rank_ || s.lost->Has(peer)) continue;
    bool got = false;
    try {
      got = s.control_recv[p]->TakeRecv();
    } catch (const std::exception&) {
      s.lost->Add(peer);  // its pair failed: LostPeers() reports it
      continue;
    }
    if (!got) continue;
    ++s.frames_from[p];
    const char* frame = s.control_frame[p].data();
    size_t n;
    if (s.partial_total[p] == 0 && s.partial[p].empty()) {  // a new message
      int32_t t32;
      uint32_t len;
      std::memcpy(&t32, frame, 4);
      std::memcpy(&len, frame + 4, 4);
      s.partial_tag[p] = t32;
      s.partial_total[p] = len;
      n = std::min<size_t>(len, kControlFrame - kHeader);
      s.partial[p].assign(frame + kHeader, n);
    } else {
      n = std::min(s.partial_total[p] - s.partial[p].size(), kControlFrame);
      s.partial[p].append(frame, n);
    }
    PostControlReceive(peer);
    if (s.partial[p].size() < s.partial_total[p]) continue;  // more frames to come
    *source = peer;
    *tag = s.partial_tag[p];
    bytes->swap(s.partial[p]);
    s.partial[p].clear();
    s.partial_total[p] = 0;
    s.next_peer = (peer + 1) % size_;
    return true;
  }
  return false;
}

std::string GlooTransport::PeerNote(int peer) {
  State& s = *state_;
  if (peer < 0 || peer >= size_) return "";
  int64_t unfinished = 0;
  for (Op& op : s.control_sends) {
    bool done = true;
    try {
      done = op.peer != peer || op.Test();
    } catch (const std::exception&) {
    }
    unfinished += !done;
  }
  const size_t p = static_cast<size_t>(peer);
  return " [gloo: " + std::to_string(unfinished) + " of " + std::to_string(s.frames_to[p]) +
         " control frames to it unfinished, " + std::to_string(s.frames_from[p]) +
         " received from it]";
}

bool GlooTransport::FlushControl() {
  State& s = *state_;
  while (!s.control_sends.empty()) {
    bool done = true;
    try {
      done = s.control_sends.front().Test();
    } catch (const std::exception&) {
      s.lost->Add(s.control_sends.front().peer);  // the peer is gone
      done = true;
    }
    if (!done) return false;
    s.control_sends.pop_front();
  }
  s.Sweep();
  return true;
}

void GlooTransport::AllreduceMinMax(const int64_t* values, int64_t* min, int64_t* max, int n) {
  using Fn = void (*)(void*, const void*, const void*, size_t);
  std::vector<int64_t> in(values, values + n);
  for (int which = 0; which < 2; ++which) {
    gloo::AllreduceOptions opts(state_->mesh);
    std::vector<int64_t> buf = in;
    opts.setOutput(buf.data(), buf.size());
    opts.setReduceFunction(which == 0 ? static_cast<Fn>(&gloo::min<int64_t>)
                                      : static_cast<Fn>(&gloo::max<int64_t>));
    opts.setTag(kMinMaxTag + 16 * which);
    opts.setTimeout(state_->timeout);
    gloo::allreduce(opts);
    std::memcpy(which == 0 ? min : max, buf.data(), sizeof(int64_t) * static_cast<size_t>(n));
  }
}

void GlooTransport::StartBarrier() {
  State& s = *state_;
  s.barrier_done = std::make_shared<std::atomic<bool>>(false);
  auto mesh = s.mesh;
  auto done = s.barrier_done;
  s.barrier = std::thread([mesh, done] {
    try {
      gloo::BarrierOptions opts(mesh);
      opts.setTag(kBarrierTag);
      // The engine decides how long to wait for the barrier (its shutdown timeout).
      opts.setTimeout(std::chrono::hours(24));
      gloo::barrier(opts);
    } catch (const std::exception&) {
      // A peer is gone: there is nothing left to wait for.
    }
    *done = true;
  });
}

std::vector<int> GlooTransport::LostPeers() { return state_->lost->peers(); }

bool GlooTransport::BarrierDone() { return state_->barrier_done->load(); }

void GlooTransport::Close() {
  if (!state_) return;
  State& s = *state_;
  if (s.barrier.joinable()) {
    // A barrier the engine gave up on (a peer left without it) cannot be interrupted:
    // its thread keeps the Gloo context alive and ends with the process.
    if (s.barrier_done->load()) {
      s.barrier.join();
    } else {
      s.barrier.detach();
    }
  }
  s.control_sends.clear();
  s.control_recv.clear();
  if (s.parked) s.parked->clear();
  s.tcp.reset();
  s.mesh.reset();
}

}  // namespace wagma
