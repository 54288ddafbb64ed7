#include "reduce/group_reduction.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "rounds/round_policy.h"

namespace wagma {

const MessageCut& GroupReduction::cut() const {
  static const MessageCut never_cut;
  return args_.cut ? *args_.cut : never_cut;
}

void GroupReduction::PostReceive(void* buf, size_t bytes, int member_index) {
  cut().PostReceive(buf, bytes, args_.members[static_cast<size_t>(member_index)], args_.tag,
                    *requests_);
}

void GroupReduction::PostSend(const void* buf, size_t bytes, int member_index) {
  if (cut().PostSend(buf, bytes, args_.members[static_cast<size_t>(member_index)], args_.tag,
                     *requests_) > 1) {
    ++messages_cut_;
  }
}

void GroupReduction::PostInclusionReceives() {
  const int g = group_size();
  inclusion_.assign(static_cast<size_t>(g), 0);
  if (!args_.share_inclusion) return;
  inclusion_[static_cast<size_t>(args_.my_index)] =
      EncodeInclusion(args_.steps, args_.stale_in_rounds);
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
  const Inclusion inclusion = DecideInclusion(inclusion_, args_.max_staleness);
  std::vector<const void*> kept;
  for (size_t j = 0; j < srcs->size(); ++j) {
    if (inclusion.included[j]) kept.push_back((*srcs)[j]);
  }
  // The most advanced member is always kept, so `kept` is never empty.
  srcs->swap(kept);
  const size_t me = static_cast<size_t>(args_.my_index);
  included_count_ = inclusion.count;
  self_included_ = inclusion.included[me];
  self_steps_behind_ = inclusion.most_steps - StepsOfInclusion(inclusion_[me]);
  return included_count_;
}

}  // namespace wagma
