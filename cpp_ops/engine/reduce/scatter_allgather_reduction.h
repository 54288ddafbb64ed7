// ScatterAllgatherReduction: reduce-scatter then allgather, both by direct exchange.
//
// The tensor is cut into |G| nearly equal chunks; member j owns chunk j.
//  1. Reduce-scatter: every member sends chunk j of its contribution to member j and
//     receives its own chunk from everyone; the owner forms the chunk's mean.
//  2. Allgather: every owner sends its mean chunk to everyone.
// Traffic per member is 2 (|G| - 1) / |G| * n, the bandwidth optimum, in two steps.
// Each chunk's mean is computed once, by its owner, so every member gets the same
// bytes. Per pair, the step-1 message precedes the step-2 message, and the receiver
// posts step 2 only after step 1 completed, so both can share one tag.
#pragma once

#include "reduce/group_reduction.h"

namespace wagma {

class ScatterAllgatherReduction : public GroupReduction {
 public:
  using GroupReduction::GroupReduction;
  void Start() override;
  bool Progress() override;
  size_t BytesSent() const override {
    const size_t mine = ChunkCount(args_.my_index) * elem_size();
    return (args_.count * elem_size() - mine) + (group_size() - 1) * mine;
  }

 private:
  size_t ChunkBegin(int j) const;
  size_t ChunkCount(int j) const { return ChunkBegin(j + 1) - ChunkBegin(j); }
  void StartAllgather();

  enum class Step { kScatter, kGather, kDone };
  Step step_ = Step::kScatter;
  std::vector<Buffer> received_;  // step 1: member j's copy of my chunk
};

}  // namespace wagma
