// MpiTransport: Transport over MPI point-to-point messages.
//
// It duplicates MPI_COMM_WORLD twice, a control and a data communicator, so the
// engine's traffic never matches Horovod's. Data messages are MPI_Isend/MPI_Irecv on
// the data communicator (MPI's non-overtaking rule gives the per-tag order the
// reductions rely on); a control message's tag is its MPI tag on the control
// communicator, received with MPI_Improbe on any tag and source, so none needs a
// posted receive. MPI must be initialised with MPI_THREAD_MULTIPLE: Horovod's thread
// and the application's use MPI too.
#pragma once

#include <cstdint>
#include <mpi.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace wagma {

class MpiTransport : public Transport {
 public:
  // Collective over MPI_COMM_WORLD. Returns "" and sets *out, or an error text (MPI
  // not initialised, not thread-multiple, or a tag upper bound below `min_tag_bound`).
  static std::string Create(int min_tag_bound, std::unique_ptr<Transport>* out);
  ~MpiTransport() override = default;  // communicators are freed by Close() only

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<RequestList> NewRequestList() override;
  void SendControl(int dest, int tag, std::string bytes) override;
  bool ReceiveControl(int* source, int* tag, std::string* bytes) override;
  bool FlushControl() override;
  std::vector<bool> RemoteRanks() override;
  void AllreduceMinMax(const int64_t* values, int64_t* min, int64_t* max, int n) override;
  void StartBarrier() override;
  bool BarrierDone() override;
  void Close() override;

 private:
  MpiTransport() = default;
  struct PendingSend {
    std::string bytes;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  int rank_ = 0, size_ = 1;
  MPI_Comm control_ = MPI_COMM_NULL;
  MPI_Comm data_ = MPI_COMM_NULL;
  std::deque<PendingSend> control_sends_;  // buffers live until MPI is done with them
  MPI_Request barrier_ = MPI_REQUEST_NULL;
};

}  // namespace wagma
