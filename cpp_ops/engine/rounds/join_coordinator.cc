#include "rounds/join_coordinator.h"

#include <algorithm>

namespace wagma {

bool JoinCoordinator::Record(int rank, const std::map<int, int64_t>& last_rounds,
                             int num_ranks) {
  if (std::find(order_.begin(), order_.end(), rank) == order_.end()) order_.push_back(rank);
  for (const auto& kv : last_rounds) {
    auto& last = last_rounds_[kv.first];
    last = std::max(last, kv.second);
  }
  return static_cast<int>(order_.size()) >= num_ranks;
}

void JoinCoordinator::Reset() {
  ++generation_;
  self_joined_ = false;
  order_.clear();
  last_rounds_.clear();
}

JoinCoordinator::Notice JoinCoordinator::Classify(int64_t generation) const {
  if (generation < generation_) return Notice::kStale;
  return generation == generation_ ? Notice::kCurrent : Notice::kEarly;
}

}  // namespace wagma
