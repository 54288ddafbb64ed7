#include "core/stream_table.h"

#include <stdexcept>

namespace wagma {

Stream* StreamTable::Find(const std::string& name) {
  auto it = streams_.find(name);
  return it == streams_.end() ? nullptr : &it->second;
}

Stream* StreamTable::FindById(int stream_id) {
  auto it = by_id_.find(stream_id);
  return it == by_id_.end() ? nullptr : it->second;
}

std::vector<StreamTable::EarlyActivation> StreamTable::Assign(Stream& s, int stream_id) {
  s.id = stream_id;
  s.registered_at = std::chrono::steady_clock::now();
  by_id_[stream_id] = &s;
  auto early = early_.find(stream_id);
  if (early == early_.end()) return {};
  std::vector<EarlyActivation> replay = std::move(early->second);
  early_.erase(early);
  return replay;
}

void StreamTable::KeepEarly(int stream_id, EarlyActivation activation) {
  std::vector<EarlyActivation>& early = early_[stream_id];
  if (early.size() >= kMaxEarly) {
    throw std::runtime_error("more than " + std::to_string(kMaxEarly) +
                             " activations arrived for stream id " + std::to_string(stream_id) +
                             ", which this rank was never assigned (latest from rank " +
                             std::to_string(activation.source) + ")");
  }
  early.push_back(std::move(activation));
}

int64_t StreamTable::rounds_held() const {
  int64_t held = 0;
  for (const auto& kv : streams_) held += static_cast<int64_t>(kv.second.rounds.size());
  return held;
}

}  // namespace wagma
