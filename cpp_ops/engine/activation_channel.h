// ActivationChannel: small control messages on the engine's control communicator.
//
// Kinds (the MPI tag is the kind):
//  kRegister  member -> root   round 0 of a stream: the sender's StreamSpec
//  kAssign    root -> members  the stream's id (round 0 may proceed)
//  kReject    root -> members  the specs disagree: the error text
//  kActivate  member -> member round r of stream id has started: join it now; the
//                              payload is the stream's fingerprint (a cross-check)
//  kGoodbye   any -> all       the sender's engine shut down without join(): the
//                              last round of each stream it joined
//  kJoined    any -> all       the sender called join(): activate it for every round
//  kAllJoined root -> all      every rank has joined; stream_id carries the last one
//  kStreamError member -> members  a rank failed the stream mid-run (e.g. a call
//                              that does not match round 0): fail it everywhere
//  kWaiting   member -> inspector  the sender's app has waited long in round r
//  kStallNotice inspector -> waiters  which ranks round r is missing
//  kProbe     waiter -> any    is your engine alive? (sent only during long stalls)
//  kProbeAnswer any -> waiter  yes
// Messages are received with MPI_Improbe on any tag, so none needs a posted receive;
// sends are non-blocking and their buffers live here until MPI is done with them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace wagma {

enum class ControlKind : int {
  kRegister = 1,
  kAssign = 2,
  kReject = 3,
  kActivate = 4,
  kGoodbye = 5,
  kJoined = 6,
  kAllJoined = 7,
  kStreamError = 8,
  kWaiting = 9,
  kStallNotice = 10,
  kProbe = 11,
  kProbeAnswer = 12,
};

struct ControlMessage {
  ControlKind kind = ControlKind::kActivate;
  int source = -1;
  int32_t stream_id = -1;
  int64_t round = 0;
  std::string payload;
};

class ActivationChannel {
 public:
  explicit ActivationChannel(MPI_Comm comm) : comm_(comm) {}
  void Send(int dest, const ControlMessage& msg);
  // Receives one pending message, if any.
  bool Poll(ControlMessage* out);
  // Tests outstanding sends; true when none is left.
  bool FlushSends();

 private:
  struct PendingSend {
    std::string bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  MPI_Comm comm_;
  std::deque<PendingSend> sends_;
};

}  // namespace wagma
