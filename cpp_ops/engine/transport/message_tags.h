// MPI tags of the engine's two communicators.
//
// The data communicator carries reduction traffic only, with one tag per
// (stream, round). Between one pair of ranks, a round's messages are received in the
// order they are sent (MPI's non-overtaking rule), so a single tag per round suffices
// for multi-step algorithms. Rounds are taken modulo kRoundWindow: no two rounds of a
// stream that are kRoundWindow apart can be in flight together. Blocking global
// rounds keep every rank within sync_period (<= kMaxSyncPeriod) rounds of every
// other; with wait-avoiding global rounds a lagging app skips to the rounds its engine
// served, and an engine joins what it is activated for at once, so the rounds in
// flight anywhere stay near the newest activated one.
//
// The control communicator carries small self-describing messages (ControlMessage);
// its tag is the message kind, and the engine probes it for any tag.
#pragma once

#include <cstdint>

namespace wagma {

constexpr int kRoundWindow = 1 << 14;
constexpr int kMaxSyncPeriod = kRoundWindow / 4;
constexpr int kMaxStreams = 1 << 16;
constexpr int kRequiredTagUpperBound = kMaxStreams * kRoundWindow;  // 2^30

inline int DataTag(int stream_id, int64_t round) {
  return stream_id * kRoundWindow + static_cast<int>(round % kRoundWindow);
}

}  // namespace wagma
