#include "rounds/group_schedule.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>

namespace wagma {
namespace {

using Phase = std::vector<std::vector<int>>;
using Phases = std::vector<Phase>;

int MinPhases(int P, int S) {
  int L = 0;
  long long reach = 1;
  while (reach < P) { reach *= S; ++L; }
  return L;
}

// Phase p of the strided construction over radix vector d (see header).
// With round_up, a phase has ceil(P / span) blocks (some short); otherwise
// floor(P / span) blocks (some long). Which one mixes depends on P.
Phases StridedPhases(int P, const std::vector<int>& d, bool round_up) {
  Phases phases;
  long long stride = 1;  // d_0 * ... * d_{p-1}
  for (size_t p = 0; p < d.size(); ++p) {
    const long long span = stride * d[p];
    const long long num_blocks =
        std::max<long long>(1, round_up ? (P + span - 1) / span : P / span);
    Phase groups;
    const long long q = P / num_blocks, extra = P % num_blocks;
    long long start = 0;
    for (long long b = 0; b < num_blocks; ++b) {
      const long long len = q + (b < extra ? 1 : 0);
      for (long long res = 0; res < stride && res < len; ++res) {
        std::vector<int> g;
        for (long long r = start + res; r < start + len; r += stride) g.push_back(int(r));
        groups.push_back(std::move(g));
      }
      start += len;
    }
    phases.push_back(std::move(groups));
    stride = span;
  }
  return phases;
}

// Base-S butterfly over positions [0, P) of an S^L grid, ranks rotated by `shift`.
Phases GridPhases(int P, int S, int L, int shift) {
  Phases phases;
  long long weight = 1;
  for (int p = 0; p < L; ++p) {
    std::map<long long, std::vector<int>> by_key;  // other digits -> members
    for (int r = 0; r < P; ++r) {
      const long long digit = (r / weight) % S;
      by_key[r - digit * weight].push_back((r + shift) % P);
    }
    Phase groups;
    for (auto& kv : by_key) {
      std::sort(kv.second.begin(), kv.second.end());
      groups.push_back(std::move(kv.second));
    }
    phases.push_back(std::move(groups));
    weight *= S;
  }
  return phases;
}

int LargestGroup(const Phases& phases) {
  size_t m = 0;
  for (const auto& ph : phases)
    for (const auto& g : ph) m = std::max(m, g.size());
  return int(m);
}

// All radix vectors of length L with digits in [2, S] and product >= P, ordered by
// product, then lexicographically. Capped: the search is a heuristic for large P.
std::vector<std::vector<int>> RadixCandidates(int P, int S, int L, size_t cap) {
  std::vector<std::pair<long long, std::vector<int>>> out;
  std::vector<int> d(L, 2);
  std::function<void(int, long long)> rec = [&](int i, long long prod) {
    if (out.size() > 4 * cap) return;
    if (i == L) {
      if (prod >= P) out.emplace_back(prod, d);
      return;
    }
    for (int v = 2; v <= S; ++v) {
      d[i] = v;
      rec(i + 1, prod * v);
    }
  };
  rec(0, 1);
  std::sort(out.begin(), out.end());
  std::vector<std::vector<int>> result;
  for (size_t i = 0; i < out.size() && i < cap; ++i) result.push_back(out[i].second);
  return result;
}

}  // namespace

bool GroupSchedule::FullyMixes(int P, const Phases& phases) {
  const int L = static_cast<int>(phases.size());
  if (P <= 1) return true;
  if (L == 0) return false;
  const size_t words = (P + 63) / 64;
  for (int start = 0; start < L; ++start) {
    // knows[r] is the set of ranks whose information r holds, as a bitset.
    std::vector<std::vector<uint64_t>> knows(P, std::vector<uint64_t>(words, 0));
    for (int r = 0; r < P; ++r) knows[r][r / 64] |= uint64_t(1) << (r % 64);
    for (int j = 0; j < L; ++j) {
      for (const auto& g : phases[(start + j) % L]) {
        std::vector<uint64_t> u(words, 0);
        for (int r : g)
          for (size_t w = 0; w < words; ++w) u[w] |= knows[r][w];
        for (int r : g) knows[r] = u;
      }
    }
    for (int r = 0; r < P; ++r)
      for (int k = 0; k < P; ++k)
        if (!((knows[r][k / 64] >> (k % 64)) & 1)) return false;
  }
  return true;
}

int GroupSchedule::DefaultGroupSize(int P) {
  int s = 1;
  while (static_cast<long long>(s) * s < P) s *= 2;
  return std::max(2, s);
}

GroupSchedule GroupSchedule::Build(int P, int S) {
  if (P < 1) throw std::invalid_argument("number of ranks must be >= 1");
  if (S < 2) throw std::invalid_argument("group_size must be >= 2");
  GroupSchedule sched;
  sched.num_ranks_ = P;
  sched.group_size_ = S;
  if (P <= S) {
    std::vector<int> all(P);
    for (int r = 0; r < P; ++r) all[r] = r;
    sched.phases_ = {{all}};
  } else {
    const int L0 = MinPhases(P, S);
    bool found = false;
    for (int L = L0; L <= L0 + 1 && !found; ++L) {
      for (const auto& d : RadixCandidates(P, S, L, 64)) {
        for (bool round_up : {true, false}) {
          Phases ph = StridedPhases(P, d, round_up);
          if (!found && LargestGroup(ph) <= S && FullyMixes(P, ph)) {
            sched.phases_ = std::move(ph);
            found = true;
          }
        }
        if (found) break;
      }
    }
    const Phases base = GridPhases(P, S, L0, 0);
    for (int extra = 1; extra <= L0 + 1 && !found; ++extra) {
      for (int shift = 1; shift < P && !found; ++shift) {
        Phases ph = base;
        Phases rotated = GridPhases(P, S, L0, shift);
        ph.insert(ph.end(), rotated.begin(), rotated.begin() + extra);
        if (FullyMixes(P, ph)) {
          sched.phases_ = std::move(ph);
          found = true;
        }
      }
    }
    if (!found) throw std::runtime_error("no fully mixing group schedule found");
  }
  sched.group_index_.assign(sched.phases_.size(), std::vector<int>(P, -1));
  for (size_t p = 0; p < sched.phases_.size(); ++p)
    for (size_t gi = 0; gi < sched.phases_[p].size(); ++gi)
      for (int r : sched.phases_[p][gi]) sched.group_index_[p][r] = int(gi);
  return sched;
}

const std::vector<int>& GroupSchedule::GroupOf(int phase, int rank) const {
  return phases_[phase][group_index_[phase][rank]];
}

}  // namespace wagma
