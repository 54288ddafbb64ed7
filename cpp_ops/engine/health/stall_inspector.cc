#include "health/stall_inspector.h"

#include <algorithm>

namespace wagma {

void StallInspector::OnWaiting(int stream_id, int64_t round, int rank,
                               Clock::time_point now) {
  // The reporter had already waited report_after_s when it sent the report.
  const auto waited = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(settings_.report_after_s));
  auto it = entries_.find({stream_id, round});
  if (it == entries_.end()) {
    it = entries_.emplace(std::make_pair(stream_id, round), Entry{{}, now - waited, {}}).first;
  }
  it->second.since.emplace(rank, now - waited);
}

void StallInspector::Forget(int stream_id, int64_t round) {
  entries_.erase({stream_id, round});
}

void StallInspector::ForgetFrom(int stream_id, int64_t from_round) {
  entries_.erase(entries_.lower_bound({stream_id, from_round}),
                 entries_.lower_bound({stream_id + 1, INT64_MIN}));
}

std::vector<StallInspector::Stall> StallInspector::Due(Clock::time_point now) {
  std::vector<Stall> due;
  const auto every = std::chrono::duration<double>(settings_.warning_s);
  const auto timeout = std::chrono::duration<double>(settings_.timeout_s);
  for (auto it = entries_.begin(); it != entries_.end();) {
    Entry& e = it->second;
    if (settings_.timeout_s > 0) {
      for (auto w = e.since.begin(); w != e.since.end();) {
        if (now - w->second > timeout) {
          w = e.since.erase(w);
        } else {
          ++w;
        }
      }
      if (e.since.empty()) {
        it = entries_.erase(it);
        continue;
      }
    }
    auto& kv = *it++;
    if (now - e.first < every) continue;
    if (e.warned.time_since_epoch().count() != 0 && now - e.warned < every) continue;
    e.warned = now;
    std::set<int> waiting;
    for (const auto& w : e.since) waiting.insert(w.first);
    due.push_back(Stall{kv.first.first, kv.first.second, waiting,
                        std::chrono::duration<double>(now - e.first).count()});
  }
  return due;
}

}  // namespace wagma
