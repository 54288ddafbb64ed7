#include "scatter_allgather_reduction.h"

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
  requests_.reserve(2 * (g - 1));
  const size_t my_bytes = ChunkCount(me) * es;
  for (int j = 0; j < g; ++j) {
    if (j == me) continue;
    received_[j] = args_.pool->Take(my_bytes);
    requests_.emplace_back();
    MPI_Irecv(received_[j].data(), static_cast<int>(my_bytes), MPI_BYTE, args_.members[j],
              args_.tag, args_.comm, &requests_.back());
  }
  // Start with the next member's chunk so that not everyone targets member 0 first.
  for (int k = 1; k < g; ++k) {
    const int j = (me + k) % g;
    requests_.emplace_back();
    MPI_Isend(contribution + ChunkBegin(j) * es, static_cast<int>(ChunkCount(j) * es),
              MPI_BYTE, args_.members[j], args_.tag, args_.comm, &requests_.back());
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
  MeanOf(args_.dtype, srcs.data(), g, ChunkCount(me), mean + ChunkBegin(me) * es);
  received_.clear();
  requests_.clear();
  for (int j = 0; j < g; ++j) {
    if (j == me) continue;
    requests_.emplace_back();
    MPI_Irecv(mean + ChunkBegin(j) * es, static_cast<int>(ChunkCount(j) * es), MPI_BYTE,
              args_.members[j], args_.tag, args_.comm, &requests_.back());
  }
  for (int k = 1; k < g; ++k) {
    const int j = (me + k) % g;
    requests_.emplace_back();
    MPI_Isend(mean + ChunkBegin(me) * es, static_cast<int>(ChunkCount(me) * es), MPI_BYTE,
              args_.members[j], args_.tag, args_.comm, &requests_.back());
  }
}

bool ScatterAllgatherReduction::Progress() {
  if (step_ == Step::kDone) return true;
  if (!AllRequestsDone(requests_)) return false;
  if (step_ == Step::kScatter) {
    StartAllgather();
    step_ = Step::kGather;
    return false;
  }
  step_ = Step::kDone;
  return true;
}

}  // namespace wagma
