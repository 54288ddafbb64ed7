// GroupSchedule: which ranks average together in each phase.
//
// Invariants (checked by Build, tested for P in 1..64, S in 2..8):
//  * each phase partitions ranks [0, P) into disjoint groups of at most S ranks;
//  * for P = S^L, phase p is exactly the base-S butterfly: the groups are the ranks
//    whose base-S digits differ only in digit p;
//  * any L cyclically consecutive phases mix fully: information from every rank
//    reaches every rank (FullyMixes);
//  * the result is a pure function of (P, S), so every rank builds the same one.
//
// Construction, first that mixes wins:
//  1. "strided" phases over a radix vector d (d_p <= S, prod d >= P, searched with the
//     smallest product first, so exact factorisations, the butterfly among them, come
//     first): phase p splits [0, P) into consecutive blocks of about d_0..d_p ranks
//     (block count rounded up or down) and groups the ranks of a block that agree
//     modulo d_0..d_{p-1}. For P = prod d
//     that is the mixed-radix butterfly. L = ceil(log_S P) is tried first, then L+1.
//  2. Fallback for sizes no such vector serves (e.g. S = 2 with P not a power of two,
//     where a singleton group in the last phase must already know everything): the
//     base-S butterfly over the first P positions, followed by as few phases of the
//     same butterfly on rotated ranks as make it mix.
#pragma once

#include <vector>

namespace wagma {

class GroupSchedule {
 public:
  // Builds the schedule for P ranks and groups of at most S (S >= 2, P >= 1).
  static GroupSchedule Build(int num_ranks, int group_size);

  // The smallest power of two >= sqrt(P): the default S.
  static int DefaultGroupSize(int num_ranks);

  int num_ranks() const { return num_ranks_; }
  int group_size() const { return group_size_; }
  int num_phases() const { return static_cast<int>(phases_.size()); }
  // Groups of a phase, each a sorted list of ranks.
  const std::vector<std::vector<int>>& groups(int phase) const { return phases_[phase]; }
  // The sorted members of `rank`'s group in `phase`.
  const std::vector<int>& GroupOf(int phase, int rank) const;

  // True when any num_phases() cyclically consecutive phases mix all ranks.
  static bool FullyMixes(int num_ranks, const std::vector<std::vector<std::vector<int>>>& phases);

 private:
  int num_ranks_ = 0;
  int group_size_ = 0;
  std::vector<std::vector<std::vector<int>>> phases_;  // phase -> group -> ranks
  std::vector<std::vector<int>> group_index_;          // phase -> rank -> group index
};

}  // namespace wagma
