#include "transport/mpi_transport.h"

#include <stdexcept>

namespace wagma {
namespace {

class MpiRequestList : public RequestList {
 public:
  explicit MpiRequestList(MPI_Comm comm) : comm_(comm) {}

  void PostReceive(void* buf, size_t bytes, int peer, int tag) override {
    requests_.emplace_back();
    is_receive_.push_back(1);
    peers_.push_back(peer);
    MPI_Irecv(buf, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &requests_.back());
  }

  void PostSend(const void* buf, size_t bytes, int peer, int tag) override {
    requests_.emplace_back();
    is_receive_.push_back(0);
    peers_.push_back(peer);
    MPI_Isend(buf, static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &requests_.back());
  }

  bool Done() override {
    if (requests_.empty()) return true;
    int flag = 0;
    const int rc = MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &flag,
                               MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS)
      throw std::runtime_error("MPI_Testall failed: code " + std::to_string(rc));
    return flag != 0;
  }

  void Clear() override {
    requests_.clear();
    is_receive_.clear();
    peers_.clear();
  }

  std::vector<PendingMessage> Pending() override {
    std::vector<PendingMessage> out;
    for (size_t i = 0; i < requests_.size(); ++i) {
      int flag = 1;
      // A completed request becomes MPI_REQUEST_NULL, which Testall counts as done.
      if (requests_[i] != MPI_REQUEST_NULL) MPI_Test(&requests_[i], &flag, MPI_STATUS_IGNORE);
      if (!flag) out.push_back({peers_[i], is_receive_[i] != 0});
    }
    return out;
  }

  void CancelReceives() override {
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (!is_receive_[i] || requests_[i] == MPI_REQUEST_NULL) continue;
      MPI_Cancel(&requests_[i]);
      // A receive matched before the cancel completes normally; the sender is a live
      // peer, so this wait is short either way.
      MPI_Wait(&requests_[i], MPI_STATUS_IGNORE);
    }
  }

 private:
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;
  std::vector<char> is_receive_;  // parallel to requests_
  std::vector<int> peers_;         // parallel to requests_
};

}  // namespace

std::string MpiTransport::Create(int min_tag_bound, std::unique_ptr<Transport>* out) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    return "MPI is not initialized: call horovod_wagma's init() (or hvd.init() with MPI) "
           "before using the WAGMA engine";
  }
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    return "MPI was initialized without MPI_THREAD_MULTIPLE (provided level " +
           std::to_string(provided) +
           "); the WAGMA engine needs it. Do not set HOROVOD_MPI_THREADS_DISABLE.";
  }
  std::unique_ptr<MpiTransport> t(new MpiTransport());
  MPI_Comm_dup(MPI_COMM_WORLD, &t->control_);
  MPI_Comm_dup(MPI_COMM_WORLD, &t->data_);
  MPI_Comm_rank(t->data_, &t->rank_);
  MPI_Comm_size(t->data_, &t->size_);
  void* attr = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(t->data_, MPI_TAG_UB, &attr, &flag);
  if (!flag || *static_cast<int*>(attr) < min_tag_bound) {
    return "this MPI's tag upper bound is below " + std::to_string(min_tag_bound) +
           ", which the WAGMA engine needs";
  }
  *out = std::move(t);
  return "";
}

std::unique_ptr<RequestList> MpiTransport::NewRequestList() {
  return std::make_unique<MpiRequestList>(data_);
}

void MpiTransport::SendControl(int dest, int tag, std::string bytes) {
  control_sends_.emplace_back();
  PendingSend& s = control_sends_.back();
  s.bytes = std::move(bytes);
  MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, dest, tag, control_,
            &s.request);
}

bool MpiTransport::ReceiveControl(int* source, int* tag, std::string* bytes) {
  int flag = 0;
  MPI_Message handle;
  MPI_Status status;
  MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, control_, &flag, &handle, &status);
  if (!flag) return false;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  bytes->assign(static_cast<size_t>(count), '\0');
  MPI_Mrecv(&(*bytes)[0], count, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
  *source = status.MPI_SOURCE;
  *tag = status.MPI_TAG;
  return true;
}

bool MpiTransport::FlushControl() {
  while (!control_sends_.empty()) {
    int flag = 0;
    MPI_Test(&control_sends_.front().request, &flag, MPI_STATUS_IGNORE);
    if (!flag) return false;
    control_sends_.pop_front();
  }
  return true;
}

std::vector<bool> MpiTransport::RemoteRanks() {
  // Ranks sharing this node: a node-local communicator's members, in data_'s ranks.
  std::vector<bool> remote(static_cast<size_t>(size_), true);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(data_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  if (node != MPI_COMM_NULL) {
    int local = 0;
    MPI_Comm_size(node, &local);
    MPI_Group node_group, comm_group;
    MPI_Comm_group(node, &node_group);
    MPI_Comm_group(data_, &comm_group);
    std::vector<int> in_node(static_cast<size_t>(local)), in_comm(static_cast<size_t>(local));
    for (int i = 0; i < local; ++i) in_node[static_cast<size_t>(i)] = i;
    MPI_Group_translate_ranks(node_group, local, in_node.data(), comm_group, in_comm.data());
    for (int r : in_comm) {
      if (r >= 0 && r < size_) remote[static_cast<size_t>(r)] = false;
    }
    MPI_Group_free(&node_group);
    MPI_Group_free(&comm_group);
    MPI_Comm_free(&node);
  }
  remote[static_cast<size_t>(rank_)] = false;
  return remote;
}

void MpiTransport::AllreduceMinMax(const int64_t* values, int64_t* min, int64_t* max, int n) {
  static_assert(sizeof(long long) == sizeof(int64_t), "MPI_LONG_LONG carries int64_t");
  MPI_Allreduce(values, min, n, MPI_LONG_LONG, MPI_MIN, data_);
  MPI_Allreduce(values, max, n, MPI_LONG_LONG, MPI_MAX, data_);
}

void MpiTransport::StartBarrier() { MPI_Ibarrier(control_, &barrier_); }

bool MpiTransport::BarrierDone() {
  int done = 0;
  MPI_Test(&barrier_, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

void MpiTransport::Close() {
  if (data_ != MPI_COMM_NULL) MPI_Comm_free(&data_);
  if (control_ != MPI_COMM_NULL) MPI_Comm_free(&control_);
}

}  // namespace wagma
