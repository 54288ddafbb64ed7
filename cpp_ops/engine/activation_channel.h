// ActivationChannel: small control messages on the engine's control communicator.
//
// Kinds (the MPI tag is the kind):
//  kRegister  member -> root   round 0 of a stream: the sender's StreamSpec
//  kAssign    root -> members  the stream's id (round 0 may proceed)
//  kReject    root -> members  the specs disagree: the error text
//  kActivate  member -> member round r of stream id has started: join it now
// Messages are received with MPI_Improbe on any tag, so none needs a posted receive;
// sends are non-blocking and their buffers live here until MPI is done with them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace wagma {

enum class ControlKind : int { kRegister = 1, kAssign = 2, kReject = 3, kActivate = 4 };

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
