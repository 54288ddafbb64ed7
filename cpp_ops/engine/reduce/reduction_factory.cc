#include "reduce/reduction_factory.h"

#include <algorithm>

#include "reduce/direct_exchange_reduction.h"
#include "reduce/scatter_allgather_reduction.h"

namespace wagma {

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
