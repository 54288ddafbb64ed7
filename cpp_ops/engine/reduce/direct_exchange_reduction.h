// DirectExchangeReduction: every member sends its whole contribution to every other
// member, and each computes the mean itself.
//
// One communication step: lowest latency. Traffic per member is (|G| - 1) * n, which
// for |G| = 2 equals the bandwidth-optimal n. Bit-identical results follow from
// summing in member order on every rank.
#pragma once

#include "reduce/group_reduction.h"

namespace wagma {

class DirectExchangeReduction : public GroupReduction {
 public:
  using GroupReduction::GroupReduction;
  void Start() override;
  bool Progress() override;
  size_t BytesSent() const override {
    return (group_size() - 1) * args_.count * elem_size();
  }

 private:
  std::vector<Buffer> received_;  // by member index; own slot empty
  bool done_ = false;
};

}  // namespace wagma
