// Transport: the engine's only way to reach other ranks. The engine and its
// reductions see ranks, byte buffers and tags; which library moves the bytes is
// behind this seam: MpiTransport (mpi_transport.h) under mpirun, GlooTransport
// (gloo_transport.h) under horovodrun --gloo.
//
// Two planes, each with its own tag space:
//  * data: tagged point-to-point messages into buffers the caller owns, posted
//    without blocking and tested later (RequestList). Between one pair of ranks,
//    messages with the same tag are matched in the order they were posted: every
//    reduction relies on it (message_tags.h). Tags run from 0 to 2^30 - 1.
//  * control: small self-contained messages (ControlChannel frames them). A send
//    copies its bytes; a receive takes whichever message has arrived from any peer,
//    with its tag, without a receive posted beforehand.
// Plus what start-up and shutdown need: which peers share this rank's node, one
// small allreduce, one non-blocking barrier.
//
// The interface asks nothing that a pair-and-slot transport (Gloo's unbound buffers,
// whose slots play the part of tags) could not provide: no communicators, no
// wildcard tags on the data plane, no request objects that outlive their list.
//
// Threads: the engine calls a transport from one thread at a time (under its loop
// lock); RequestLists belong to the reduction that made them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wagma {

// A data message posted and not yet complete: for the hold report (hold_report.h).
struct PendingMessage {
  int peer = -1;
  bool receive = false;
};

// The pending data messages of one step of one reduction.
class RequestList {
 public:
  virtual ~RequestList() = default;
  virtual void PostReceive(void* buf, size_t bytes, int peer, int tag) = 0;
  virtual void PostSend(const void* buf, size_t bytes, int peer, int tag) = 0;
  // True once every message posted since Clear() has completed (none posted: true).
  // Throws on a transport error.
  virtual bool Done() = 0;
  // Starts a new step. Only once Done().
  virtual void Clear() = 0;
  // Gives up (a peer is gone): cancels the pending receives and returns once none of
  // them can still write into its buffer. Sends may stay pending: their buffers must
  // outlive them.
  virtual void CancelReceives() = 0;
  // The messages posted since Clear() that have not completed (tests them; a report's
  // question, not the loop's).
  virtual std::vector<PendingMessage> Pending() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Data plane.
  virtual std::unique_ptr<RequestList> NewRequestList() = 0;

  // Control plane. `tag` >= 0 (the message kind).
  virtual void SendControl(int dest, int tag, std::string bytes) = 0;
  // Takes one control message that has arrived from any peer; false if none has.
  virtual bool ReceiveControl(int* source, int* tag, std::string* bytes) = 0;
  // Tests the control sends still in progress; true when none is left.
  virtual bool FlushControl() = 0;

  // Collective: for each rank, whether it runs on another node than this one.
  virtual std::vector<bool> RemoteRanks() = 0;
  // Collective and blocking: element-wise minimum and maximum of `n` values.
  virtual void AllreduceMinMax(const int64_t* values, int64_t* min, int64_t* max, int n) = 0;
  // Collective and non-blocking: start once, then test until true.
  virtual void StartBarrier() = 0;
  virtual bool BarrierDone() = 0;
  // Releases the transport's resources, after the barrier. Idempotent.
  virtual void Close() = 0;
  // Peers whose connection this transport saw fail (Gloo: the socket closed, so the
  // process or its host is gone), in the order they failed. MPI cannot tell: none.
  // A data message to or from a lost peer never completes (as on MPI); the engine
  // fails the rounds that need it.
  virtual std::vector<int> LostPeers() { return {}; }
  // What this transport knows of its traffic with `peer`, for a loss verdict's text
  // (" [...]"), or "".
  virtual std::string PeerNote(int /*peer*/) { return ""; }
  // True when a thread of the transport's own moves the bytes (Gloo's device loop),
  // so that the engine's polls only observe completions; false when polling is what
  // moves them (MPI progresses inside MPI_Test).
  virtual bool ProgressesOnItsOwn() const { return false; }
};

}  // namespace wagma
