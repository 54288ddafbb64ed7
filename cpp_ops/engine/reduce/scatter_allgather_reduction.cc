#include "reduce/scatter_allgather_reduction.h"

namespace wagma {

size_t ScatterAllgatherReduction::ChunkBegin(int j) const {
  const size_t g = static_cast<size_t>(group_size());
  const size_t q = args_.count / g, r = args_.count % g;
  const size_t jj = static_cast<size_t>(j);
  return jj * q + (jj < r ? jj : r);
}

void ScatterAllgatherReduction::Start() {
  const int g = group_size();
  const int me = args_.my_index;
  const size_t es = elem_size();
  const char* contribution = static_cast<const char*>(args_.contribution);
  received_.resize(g);
  NewStep();
  PostInclusionReceives();
  const size_t my_bytes = ChunkCount(me) * es;
  for (int j = 0; j < g; ++j) {
    if (j == me) continue;
    received_[j] = args_.pool->Take(my_bytes);
    PostReceive(received_[j].data(), my_bytes, j);
  }
  PostInclusionSends();
  // Start with the next member's chunk so that not everyone targets member 0 first.
  for (int k = 1; k < g; ++k) {
    const int j = (me + k) % g;
    PostSend(contribution + ChunkBegin(j) * es, ChunkCount(j) * es, j);
  }
}

void ScatterAllgatherReduction::StartAllgather() {
  const int g = group_size();
  const int me = args_.my_index;
  const size_t es = elem_size();
  std::vector<const void*> srcs(g);
  for (int j = 0; j < g; ++j) {
    srcs[j] = j == me ? static_cast<const char*>(args_.contribution) + ChunkBegin(me) * es
                      : received_[j].data();
  }
  // All step-1 sends have completed, so writing into result is safe even when it
  // aliases the contribution.
  char* mean = static_cast<char*>(args_.result);
  // Every member saw every flag in step 1, so every chunk has the same divisor.
  const int n = KeepIncluded(&srcs);
  MeanOf(args_.dtype, srcs.data(), n, ChunkCount(me), mean + ChunkBegin(me) * es);
  received_.clear();
  NewStep();
  for (int j = 0; j < g; ++j) {
    if (j != me) PostReceive(mean + ChunkBegin(j) * es, ChunkCount(j) * es, j);
  }
  for (int k = 1; k < g; ++k) {
    PostSend(mean + ChunkBegin(me) * es, ChunkCount(me) * es, (me + k) % g);
  }
}

bool ScatterAllgatherReduction::Progress() {
  if (step_ == Step::kDone) return true;
  if (!StepDone()) return false;
  if (step_ == Step::kScatter) {
    StartAllgather();
    step_ = Step::kGather;
    return false;
  }
  step_ = Step::kDone;
  return true;
}

}  // namespace wagma
