// StreamTable: this rank's streams by name and, once the registrar assigned it, by
// id; and the activations that arrived for an id before this rank learnt it.
//
// An activation for an id this rank has not been assigned yet is kept and replayed
// on assignment: dropping it would leave the round to this rank's app, a wait on an
// app. Bounded, since a peer activates at most a few rounds past round 0 before this
// rank must enter.
// Owned by the engine's loop (under its loop lock); no locking of its own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/stream_state.h"

namespace wagma {

class StreamTable {
 public:
  struct EarlyActivation {
    int source;
    int64_t round;
    std::string payload;
  };

  Stream* Find(const std::string& name);
  Stream* FindById(int stream_id);
  Stream& Create(const std::string& name) { return streams_[name]; }
  // Gives `s` its id; returns the activations that came early for it, to replay.
  std::vector<EarlyActivation> Assign(Stream& s, int stream_id);
  // Keeps an activation for an id not assigned yet. Throws past kMaxEarly per id.
  void KeepEarly(int stream_id, EarlyActivation activation);
  static constexpr size_t kMaxEarly = size_t(1) << 16;

  // Every stream, by name.
  std::map<std::string, Stream>& all() { return streams_; }
  int64_t rounds_held() const;

 private:
  std::map<std::string, Stream> streams_;
  std::unordered_map<int, Stream*> by_id_;
  std::map<int, std::vector<EarlyActivation>> early_;
};

}  // namespace wagma
