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

void GroupReduction::PostInclusionReceives() {
  const int g = group_size();
  inclusion_.assign(static_cast<size_t>(g), 1);
  if (!args_.share_inclusion) return;
  inclusion_[static_cast<size_t>(args_.my_index)] = args_.included ? 1 : 0;
  for (int j = 0; j < g; ++j) {
    if (j != args_.my_index) PostReceive(&inclusion_[static_cast<size_t>(j)], 1, j);
  }
}

void GroupReduction::PostInclusionSends() {
  if (!args_.share_inclusion) return;
  for (int j = 0; j < group_size(); ++j) {
    if (j != args_.my_index) PostSend(&inclusion_[static_cast<size_t>(args_.my_index)], 1, j);
  }
}

int GroupReduction::KeepIncluded(std::vector<const void*>* srcs) {
  std::vector<const void*> kept;
  for (size_t j = 0; j < srcs->size(); ++j) {
    if (inclusion_.empty() || inclusion_[j]) kept.push_back((*srcs)[j]);
  }
  // Every member left out cannot happen while the activator's app value is fresh;
  // should it, the plain mean of everyone beats an empty one.
  const bool none = kept.empty();
  if (!none) srcs->swap(kept);
  included_count_ = static_cast<int>(srcs->size());
  self_included_ = none || inclusion_.empty() ||
                   inclusion_[static_cast<size_t>(args_.my_index)] != 0;
  return included_count_;
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
