// MessageCut: how a group reduction posts one message to or from one peer: as one MPI
// message, or cut into fragments small enough for the transport's eager protocol.
//
// Why: Open MPI's TCP transport sends a message above its eager limit (64 KiB by
// default) by rendezvous: the bytes past the first fragment wait for the receiver's
// acknowledgement, one extra round trip per message. A scatter-allgather round is two
// message steps; between hosts 4.3 ms apart each step cost three one-way latencies
// instead of one, and a round took longer than the 10 ms step it averaged
// (lab/multihost_throughput.py). Fragments under the eager limit leave at once.
//
// Invariants:
//  * sender and receiver cut a message identically: the cut depends only on its size
//    and on whether the two ranks share a node, which both see the same way (and on
//    the HOROVOD_WAGMA_FRAGMENT_* settings, which must match on every rank, like every
//    HOROVOD_* setting);
//  * the fragments of one message carry its tag and are posted in order on both sides,
//    so MPI's non-overtaking rule matches fragment k with fragment k;
//  * messages within a node are not cut (shared memory has no such round trip; the
//    scope "all" cuts them too, for tests), nor are messages above `up_to_bytes`, whose
//    time on the wire dwarfs one round trip.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace wagma {

// HOROVOD_WAGMA_FRAGMENT_BYTES (0: never cut), HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES and
// HOROVOD_WAGMA_FRAGMENT_SCOPE ("remote", the default, or "all"), as read by
// EngineSettings; `error` names a malformed one.
struct FragmentSettings {
  // Below Open MPI's TCP eager limit (65,536 bytes including its match header, less
  // 1 KiB of headroom).
  size_t fragment_bytes = 63 * 1024;
  size_t up_to_bytes = 4 << 20;
  bool cut_local = false;  // scope "all"
  std::string scope = "remote";
  std::string error;
};

class MessageCut {
 public:
  // Never cuts.
  MessageCut() = default;
  // Collective over the transport: learns which ranks share this rank's node, and
  // checks that every rank has the same settings. Returns "" or an error naming the
  // bad setting.
  std::string Init(Transport& transport, const FragmentSettings& settings);

  // How many messages a payload of `bytes` to or from `peer` travels as (>= 1).
  size_t Pieces(size_t bytes, int peer) const;

  // Posts the receive of one message from `peer` into `buf`, onto `requests`; returns
  // how many pieces it travels as.
  size_t PostReceive(void* buf, size_t bytes, int peer, int tag, RequestList& requests) const;
  // Posts the send of one message to `peer`; returns how many pieces.
  size_t PostSend(const void* buf, size_t bytes, int peer, int tag, RequestList& requests) const;

  size_t fragment_bytes() const { return fragment_bytes_; }

 private:
  // Calls post(offset, length) for each piece of a message of `bytes` to or from
  // `peer`, in order; returns the number of pieces.
  template <typename PostPiece>
  size_t ForEachPiece(size_t bytes, int peer, PostPiece post) const;

  size_t fragment_bytes_ = 0;
  size_t up_to_bytes_ = 4 << 20;
  bool cut_local_ = false;
  std::vector<bool> remote_;  // remote_[r]: rank r of the communicator is on another node
};

}  // namespace wagma
