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
  inclusion_.assign(static_cast<size_t>(g), 0);
  if (!args_.share_inclusion) return;
  inclusion_[static_cast<size_t>(args_.my_index)] =
      args_.stale_in_rounds ? -args_.steps - 1 : args_.steps;
  for (int j = 0; j < g; ++j) {
    if (j != args_.my_index)
      PostReceive(&inclusion_[static_cast<size_t>(j)], sizeof(int64_t), j);
  }
}

void GroupReduction::PostInclusionSends() {
  if (!args_.share_inclusion) return;
  for (int j = 0; j < group_size(); ++j) {
    if (j != args_.my_index)
      PostSend(&inclusion_[static_cast<size_t>(args_.my_index)], sizeof(int64_t), j);
  }
}

int GroupReduction::KeepIncluded(std::vector<const void*>* srcs) {
  included_count_ = static_cast<int>(srcs->size());
  if (!args_.share_inclusion) return included_count_;
  // Every member decodes the same messages, so every member keeps the same set.
  const auto steps_of = [](int64_t code) { return code < 0 ? -code - 1 : code; };
  int64_t most = 0;
  for (int64_t code : inclusion_) most = std::max(most, steps_of(code));
  // Old in rounds alone is not enough: an app that waits (in a Horovod collective,
  // say) while one lagging rank drives the rounds holds a value old in rounds, yet
  // ahead in training. Leaving it out would leave the lagging rank averaging alone.
  const auto included = [&](int64_t code) {
    return code >= 0 || most - steps_of(code) <= args_.max_staleness;
  };
  std::vector<const void*> kept;
  for (size_t j = 0; j < srcs->size(); ++j) {
    if (included(inclusion_[j])) kept.push_back((*srcs)[j]);
  }
  // The most advanced member is always kept, so `kept` is never empty.
  srcs->swap(kept);
  const int64_t mine = inclusion_[static_cast<size_t>(args_.my_index)];
  included_count_ = static_cast<int>(srcs->size());
  self_included_ = included(mine);
  self_steps_behind_ = most - steps_of(mine);
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
