// JoinCoordinator: join() across ranks (uneven data), as this rank sees it.
//
// A rank that calls join() tells every rank; until all have joined its engine serves
// every round with its final model and its own calls fail. The registrar (world rank
// 0) counts the joins in arrival order, with the furthest round each joined rank's
// app entered per stream, and once every rank has joined tells everyone the last one
// to join and those rounds, from which every stream continues. A rank that leaves
// without join() meanwhile fails the join everywhere. The engine sends the messages;
// this class keeps the tally.
//
// Joins are numbered (generation: the joins this rank has seen end), and a rank's
// notice that it joined carries its number. The notices travel on other channels than
// the registrar's "all joined", so one can arrive after the join it belongs to has
// ended here (stale: it must not mark the rank joined again, or this rank would later
// take the rank's published data for its contribution to blocking rounds), or, with
// the next join already under way elsewhere, before this rank has seen the current
// one end (early: held until it has).
// Owned by the engine's loop; no locking of its own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace wagma {

class JoinCoordinator {
 public:
  // This rank called join() and not every rank has joined yet.
  bool self_joined() const { return self_joined_; }
  void MarkSelfJoined() { self_joined_ = true; }

  // Registrar: `rank` joined; `last_rounds` (stream id -> last round its app
  // entered). True once all `num_ranks` have.
  bool Record(int rank, const std::map<int, int64_t>& last_rounds, int num_ranks);
  // Registrar: some rank has joined and the join is not over.
  bool in_progress() const { return !order_.empty(); }
  int last_rank() const { return order_.back(); }
  // Per stream, the furthest round any joined rank's app entered.
  const std::map<int, int64_t>& last_rounds() const { return last_rounds_; }

  // Every rank joined (or the join failed): start over, with the next generation.
  void Reset();

  // The joins that have ended here; a join notice carries the sender's.
  int64_t generation() const { return generation_; }
  enum class Notice { kStale, kCurrent, kEarly };
  // A notice of generation `generation`: of a join over here, this one, or the next.
  Notice Classify(int64_t generation) const;
  // An early notice, to hand back once the current join has ended here.
  void Defer(int rank, std::string payload) { early_.emplace_back(rank, std::move(payload)); }
  std::vector<std::pair<int, std::string>> TakeEarly() { return std::exchange(early_, {}); }

 private:
  int64_t generation_ = 0;
  std::vector<std::pair<int, std::string>> early_;  // (rank, payload), in arrival order
  bool self_joined_ = false;
  std::vector<int> order_;  // registrar: ranks joined so far, in arrival order
  std::map<int, int64_t> last_rounds_;
};

}  // namespace wagma
