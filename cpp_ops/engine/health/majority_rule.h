// MajorityRule: which side of a broken member set may go on training (Horovod
// elastic). A rank that loses peers sees its side as the member set less the lost
// ranks. That side goes on iff it holds more than half of the member set, or exactly
// half including rank 0; otherwise it is *fenced*: it stops with an error rather than
// train alone.
//
// Invariant: when a member set of P ranks splits into two sides that each see the
// other's ranks as lost, exactly one side goes on (more than half is at most one side;
// of two exact halves, one holds rank 0). A crash that leaves half or fewer, without
// rank 0, also fences the survivors: from inside, a crash and a cut look the same.
// horovod_wagma/common/elastic/membership.py applies the same rule when Horovod re-forms the
// job (may_go_on), for survivors that reached the reset another way. BehindTheSameCut
// is which silent peers a verdict counts with the losses.
#pragma once

#include <set>

namespace wagma {

inline bool MayGoOn(int size, const std::set<int>& lost) {
  const int remaining = size - static_cast<int>(lost.size());
  if (2 * remaining > size) return true;
  return 2 * remaining == size && lost.count(0) == 0;
}

// At the end of the settle window, a peer silent for half the liveness window is
// behind the same cut as the losses already seen: counted with them, so that a side
// judging on part of its losses still sees that it is a minority. Live peers are heard
// every probe interval (1 s), far less than half of any liveness window worth setting.
inline bool BehindTheSameCut(double silent_s, double liveness_s) {
  return silent_s >= liveness_s / 2;
}

}  // namespace wagma
