#include "group_reduction.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "direct_exchange_reduction.h"
#include "scatter_allgather_reduction.h"

namespace wagma {

bool AllRequestsDone(std::vector<MPI_Request>& requests) {
  if (requests.empty()) return true;
  int flag = 0;
  const int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag,
                             MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) throw std::runtime_error("MPI_Testall failed: code " + std::to_string(rc));
  return flag != 0;
}

void CancelReceives(std::vector<MPI_Request>& requests, size_t num_receives) {
  for (size_t i = 0; i < num_receives && i < requests.size(); ++i) {
    if (requests[i] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&requests[i]);
    // A receive matched before the cancel completes normally; the sender is a live
    // peer, so this wait is short either way.
    MPI_Wait(&requests[i], MPI_STATUS_IGNORE);
  }
}

const MessageCut& GroupReduction::cut() const {
  static const MessageCut never_cut;
  return args_.cut ? *args_.cut : never_cut;
}

void GroupReduction::PostReceive(void* buf, size_t bytes, int member_index) {
  receives_ += cut().PostReceive(buf, bytes, args_.members[static_cast<size_t>(member_index)],
                                 args_.tag, args_.comm, requests_);
}

void GroupReduction::PostSend(const void* buf, size_t bytes, int member_index) {
  if (cut().PostSend(buf, bytes, args_.members[static_cast<size_t>(member_index)], args_.tag,
                     args_.comm, requests_) > 1) {
    ++messages_cut_;
  }
}

std::unique_ptr<GroupReduction> MakeGroupReduction(ReductionArgs args,
                                                   const ReductionThresholds& thresholds) {
  const size_t bytes = args.count * ElementSize(args.dtype);
  const size_t direct_up_to =
      args.members.size() <= 2 ? std::max(thresholds.small_bytes, thresholds.pair_scatter_bytes)
                               : thresholds.small_bytes;
  if (args.members.size() == 1 || bytes <= direct_up_to)
    return std::make_unique<DirectExchangeReduction>(std::move(args));
  return std::make_unique<ScatterAllgatherReduction>(std::move(args));
}

}  // namespace wagma
