// StreamStats: per-stream counters behind stats(name) in the frontends.
//
// Waits are the app's time blocked collecting results (synchronize), split by round
// kind: a wait-avoiding run should show little group wait and its waiting at global
// rounds, where every rank is waited for by design.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace wagma {

struct StreamStats {
  int64_t rounds = 0;         // rounds the app entered and collected
  int64_t global_rounds = 0;  // of which global
  int64_t activations_sent = 0;
  int64_t passive_joins = 0;
  int64_t staleness_sum = 0;  // over passive joins, in rounds
  int64_t staleness_max = 0;
  int64_t group_wait_us = 0;
  int64_t global_wait_us = 0;
  int64_t bytes_sent = 0;
  int64_t errors = 0;  // rounds that ended with an error
  // Wait-avoiding global rounds: rounds the app skipped because its engine had
  // already served them (and a newer one) while the app computed.
  int64_t rounds_skipped = 0;
  // Rounds this rank's engine joined with a value older than max_staleness rounds
  // whose app was also more than max_staleness steps behind the round's most advanced
  // member: its value was left out of the mean (it still received the mean). Nobody
  // waited for its app.
  int64_t rounds_left_out = 0;
  // Rounds joined with a value older than max_staleness rounds that still counted: its
  // app was not that far behind in steps (it waited, e.g. in a Horovod collective,
  // while a lagging rank drove the rounds).
  int64_t rounds_kept_ahead = 0;
  // The grace window (grace_window.h): passive joins held back a little for the app,
  // and of those, the ones whose app came in time to contribute its fresh value.
  int64_t grace_held = 0;
  int64_t grace_caught = 0;
  // Passive joins whose value entered the mean, by contribution age (rounds since the
  // app last entered the stream, or steps its app was behind the round's most
  // advanced member, whichever is smaller): never above max_staleness.
  std::map<int64_t, int64_t> age_histogram;
};

// {"name": {"rounds": ..., ...}, ...}
std::string StreamStatsJson(const std::map<std::string, StreamStats>& stats);

}  // namespace wagma
