#include "reduce/direct_exchange_reduction.h"

namespace wagma {

void DirectExchangeReduction::Start() {
  const int g = group_size();
  const size_t bytes = args_.count * elem_size();
  received_.resize(g);
  NewStep();
  PostInclusionReceives();
  for (int j = 0; j < g; ++j) {
    if (j == args_.my_index) continue;
    received_[j] = args_.pool->Take(bytes);
    PostReceive(received_[j].data(), bytes, j);
  }
  PostInclusionSends();
  for (int j = 0; j < g; ++j) {
    if (j != args_.my_index) PostSend(args_.contribution, bytes, j);
  }
}

bool DirectExchangeReduction::Progress() {
  if (done_) return true;
  if (!StepDone()) return false;
  const int g = group_size();
  std::vector<const void*> srcs(g);
  for (int j = 0; j < g; ++j)
    srcs[j] = j == args_.my_index ? args_.contribution : received_[j].data();
  // Element-wise, each index read before it is written: safe when result aliases
  // the contribution, and every send has completed.
  const int n = KeepIncluded(&srcs);
  MeanOf(args_.dtype, srcs.data(), n, args_.count, args_.result);
  received_.clear();
  done_ = true;
  return true;
}

}  // namespace wagma
