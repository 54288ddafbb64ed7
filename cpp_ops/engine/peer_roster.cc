#include "peer_roster.h"

#include <cstring>
#include <stdexcept>

#include "stream_spec.h"

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

std::string PeerRoster::PackLastRounds(const std::map<int, int64_t>& last_round) {
  std::string out;
  for (const auto& kv : last_round) {
    const int32_t id = kv.first;
    const int64_t r = kv.second;
    out.append(reinterpret_cast<const char*>(&id), sizeof(id));
    out.append(reinterpret_cast<const char*>(&r), sizeof(r));
  }
  return out;
}

std::map<int, int64_t> PeerRoster::UnpackLastRounds(const std::string& bytes) {
  constexpr size_t kPair = sizeof(int32_t) + sizeof(int64_t);
  if (bytes.size() % kPair != 0) throw std::runtime_error("malformed goodbye message");
  std::map<int, int64_t> out;
  for (size_t off = 0; off < bytes.size(); off += kPair) {
    int32_t id = 0;
    int64_t r = 0;
    std::memcpy(&id, bytes.data() + off, sizeof(id));
    std::memcpy(&r, bytes.data() + off + sizeof(id), sizeof(r));
    out[id] = r;
  }
  return out;
}

}  // namespace wagma
