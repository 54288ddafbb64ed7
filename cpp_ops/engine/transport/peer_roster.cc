#include "transport/peer_roster.h"

#include "core/stream_spec.h"

namespace wagma {

void PeerRoster::MarkDeparted(int rank, std::map<int, int64_t> last_round) {
  departed_[rank] = std::move(last_round);
  joined_.erase(rank);
}

std::string PeerRoster::MissingPeer(int stream_id, const std::string& name, int64_t round,
                                    const std::vector<int>& members) const {
  for (int m : members) {
    auto d = departed_.find(m);
    if (d == departed_.end()) continue;
    auto last = d->second.find(stream_id);
    const int64_t last_round = last == d->second.end() ? -1 : last->second;
    if (round <= last_round) continue;  // it joined that round before leaving
    if (lost(m)) {
      return "rank " + std::to_string(m) + " was lost: its connection closed (the " +
             "process or its host is gone), and round " + std::to_string(round) +
             " of stream '" + NameForMessage(name) + "' needs it";
    }
    std::string text = "rank " + std::to_string(m) +
                       " left without join(): its engine shut down after ";
    text += last_round < 0 ? std::string("never joining stream '") + NameForMessage(name) + "'"
                           : "round " + std::to_string(last_round) + " of stream '" +
                                 NameForMessage(name) + "'";
    text += ", and round " + std::to_string(round) + " needs it";
    text += " (a rank that runs out of data must call join())";
    return text;
  }
  return "";
}

}  // namespace wagma
