// MakeGroupReduction: which algorithm a round runs. Apart from GroupReduction's own
// files so that the base class never includes the algorithms derived from it.
#pragma once

#include <memory>

#include "reduce/group_reduction.h"

namespace wagma {

// Picks the algorithm: DirectExchange for small tensors and (up to pair_scatter_bytes)
// pairs, ScatterAllgather otherwise.
std::unique_ptr<GroupReduction> MakeGroupReduction(ReductionArgs args,
                                                   const ReductionThresholds& thresholds);

}  // namespace wagma
