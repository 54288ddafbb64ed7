// MessageCut: how a group reduction posts one message to or from one peer: as one MPI
// message, or cut into fragments small enough for the transport's eager protocol.
//
// Why: Open MPI's TCP transport sends a message above its eager limit (64 KiB by
// default) by rendezvous: the bytes past the first fragment wait for the receiver's
// acknowledgement, one extra round trip per message. A scatter-allgather round is two
// message steps; between hosts 4.3 ms apart each step cost three one-way latencies
// instead of one, and a round took longer than the 10 ms step it averaged
// (bench/multihost_throughput.py). Fragments under the eager limit leave at once.
//
// Invariants:
//  * sender and receiver cut a message identically: the cut depends only on its size
//    and on whether the two ranks share a node, which both see the same way (and on
//    the HOROVOD_WAGMA_FRAGMENT_* settings, which must match on every rank, like every
//    HOROVOD_* setting);
//  * the fragments of one message carry its tag and are posted in order on both sides,
//    so MPI's non-overtaking rule matches fragment k with fragment k;
//  * receives go into the request list before sends within a step (PostReceive before
//    PostSend), and `receives` counts them, for GroupReduction::Abandon();
//  * messages within a node are not cut (shared memory has no such round trip; the
//    scope "all" cuts them too, for tests), nor are messages above `up_to_bytes`, whose
//    time on the wire dwarfs one round trip.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <string>
#include <vector>

namespace wagma {

class MessageCut {
 public:
  // Never cuts.
  MessageCut() = default;
  // Collective over `comm`: learns which ranks share this rank's node. Settings from
  // HOROVOD_WAGMA_FRAGMENT_BYTES (0: never cut), HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES and
  // HOROVOD_WAGMA_FRAGMENT_SCOPE ("remote", the default, or "all"). Returns "" or an
  // error naming the bad setting.
  std::string Init(MPI_Comm comm);

  // How many messages a payload of `bytes` to or from `peer` travels as (>= 1).
  size_t Pieces(size_t bytes, int peer) const;

  // Posts the receive of one message from `peer` into `buf`; appends its requests and
  // returns how many (its pieces).
  size_t PostReceive(void* buf, size_t bytes, int peer, int tag, MPI_Comm comm,
                     std::vector<MPI_Request>& requests) const;
  // Posts the send of one message to `peer`; appends its requests, returns how many.
  size_t PostSend(const void* buf, size_t bytes, int peer, int tag, MPI_Comm comm,
                  std::vector<MPI_Request>& requests) const;

  size_t fragment_bytes() const { return fragment_bytes_; }

 private:
  // Calls post(offset, length) for each piece of a message of `bytes` to or from
  // `peer`, in order; returns the number of pieces.
  template <typename PostPiece>
  size_t ForEachPiece(size_t bytes, int peer, PostPiece post) const;

  // Below Open MPI's TCP eager limit (65,536 bytes including its match header).
  size_t fragment_bytes_ = 0;
  size_t up_to_bytes_ = 4 << 20;
  bool cut_local_ = false;
  std::vector<char> remote_;  // remote_[r]: rank r of the communicator is on another node
};

}  // namespace wagma
