// PeerRoster: what this rank knows about the other ranks' lifecycles.
//
//  * joined:   the rank ran out of data and called join(); its engine still serves
//              every round with its final model, but it only joins rounds it is
//              activated for, so rounds that normally send no activation (global
//              rounds, rounds without wait-avoidance) must activate it too;
//  * departed: the rank's engine shut down without join(). Its goodbye lists, per
//              stream, the last round it joined: it still completes those, and every
//              later round that needs it must fail with an error naming it rather
//              than wait forever.
// Owned by the background thread; no locking.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace wagma {

class PeerRoster {
 public:
  void MarkJoined(int rank) { joined_.insert(rank); }
  bool joined(int rank) const { return joined_.count(rank) > 0; }
  void ClearJoined() { joined_.clear(); }
  int num_joined() const { return static_cast<int>(joined_.size()); }
  std::vector<int> joined_ranks() const { return {joined_.begin(), joined_.end()}; }

  // last_round: stream id -> the last round of it the rank joined.
  void MarkDeparted(int rank, std::map<int, int64_t> last_round);
  bool departed(int rank) const { return departed_.count(rank) > 0; }
  // The lowest rank that left without join() or was lost; -1 when none has.
  int first_departed() const { return departed_.empty() ? -1 : departed_.begin()->first; }
  // Departed without a goodbye: the transport saw its connection fail.
  void MarkLost(int rank) {
    lost_.insert(rank);
    departed_[rank];
  }
  bool lost(int rank) const { return lost_.count(rank) > 0; }
  // "called join()" / "left without join()" / "was lost", or empty for an active rank.
  std::string WhyAbsent(int rank) const {
    if (lost(rank)) return "was lost";
    if (departed(rank)) return "left without join()";
    if (joined(rank)) return "called join()";
    return "";
  }
  // Empty when round `round` of stream `stream_id` (named `name`) can still complete
  // with `members`; otherwise the error that names the departed rank it needs.
  std::string MissingPeer(int stream_id, const std::string& name, int64_t round,
                          const std::vector<int>& members) const;

 private:
  std::set<int> joined_;
  std::set<int> lost_;
  std::map<int, std::map<int, int64_t>> departed_;
};

}  // namespace wagma
