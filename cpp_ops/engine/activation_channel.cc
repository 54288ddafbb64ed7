#include "activation_channel.h"

#include <cstring>
#include <stdexcept>

namespace wagma {
namespace {

struct Header {
  int32_t stream_id;
  int32_t pad;
  int64_t round;
};

}  // namespace

void ActivationChannel::Send(int dest, const ControlMessage& msg) {
  sends_.emplace_back();
  PendingSend& s = sends_.back();
  Header h{msg.stream_id, 0, msg.round};
  s.bytes.assign(reinterpret_cast<const char*>(&h), sizeof(h));
  s.bytes += msg.payload;
  MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, dest,
            static_cast<int>(msg.kind), comm_, &s.request);
}

bool ActivationChannel::Poll(ControlMessage* out) {
  int flag = 0;
  MPI_Message handle;
  MPI_Status status;
  MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, &handle, &status);
  if (!flag) return false;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  std::string bytes(static_cast<size_t>(count), '\0');
  MPI_Mrecv(bytes.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
  if (bytes.size() < sizeof(Header)) throw std::runtime_error("short control message");
  Header h;
  std::memcpy(&h, bytes.data(), sizeof(h));
  out->kind = static_cast<ControlKind>(status.MPI_TAG);
  out->source = status.MPI_SOURCE;
  out->stream_id = h.stream_id;
  out->round = h.round;
  out->payload = bytes.substr(sizeof(Header));
  return true;
}

bool ActivationChannel::FlushSends() {
  while (!sends_.empty()) {
    int flag = 0;
    MPI_Test(&sends_.front().request, &flag, MPI_STATUS_IGNORE);
    if (!flag) return false;
    sends_.pop_front();
  }
  return true;
}

}  // namespace wagma
