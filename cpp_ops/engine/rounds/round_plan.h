// RoundPlan: what round r of a stream is (docs/design.md, section 2.1).
//
// Round 0 and every round with (r + 1) % tau == 0 are global. The others are group
// rounds; the k-th of them uses phase k mod L. Counting the global rounds among
// 1..r-1 gives k = r - 1 - floor(r / tau) for tau >= 2.
#pragma once

#include <cstdint>

namespace wagma {

struct RoundPlan {
  bool global = true;
  int phase = -1;  // group rounds only
};

inline RoundPlan PlanRound(int64_t round, int sync_period, int num_phases) {
  RoundPlan plan;
  if (round == 0 || (round + 1) % sync_period == 0) return plan;
  plan.global = false;
  const int64_t k = round - 1 - round / sync_period;
  plan.phase = static_cast<int>(k % num_phases);
  return plan;
}

}  // namespace wagma
