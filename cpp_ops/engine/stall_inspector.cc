#include "stall_inspector.h"

#include <algorithm>
#include <cstdlib>

namespace wagma {
namespace {

double EnvSeconds(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

}  // namespace

StallSettings StallSettings::FromEnv() {
  StallSettings s;
  s.warning_s = EnvSeconds("WAGMA_STALL_WARNING_S", s.warning_s);
  s.timeout_s = EnvSeconds("WAGMA_STALL_TIMEOUT_S", s.timeout_s);
  // Report early enough that the inspector hears from every waiting rank before it
  // warns, but never for the ordinary sub-second waits of a global round.
  double shortest = s.warning_s;
  if (s.timeout_s > 0) shortest = std::min(shortest, s.timeout_s);
  s.report_after_s = std::max(0.05, std::min(1.0, shortest / 4));
  s.probe_after_s = std::max(s.report_after_s, shortest / 2);
  // A live engine answers within milliseconds; a second covers a loaded machine.
  s.probe_grace_s = std::max(1.0, s.probe_after_s);
  return s;
}

void StallInspector::OnWaiting(int stream_id, int64_t round, int rank,
                               Clock::time_point now) {
  // The reporter had already waited report_after_s when it sent the report.
  const auto waited = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(settings_.report_after_s));
  auto it = entries_.find({stream_id, round});
  if (it == entries_.end()) {
    it = entries_.emplace(std::make_pair(stream_id, round), Entry{{}, now - waited, {}}).first;
  }
  it->second.waiting.insert(rank);
}

void StallInspector::Forget(int stream_id, int64_t round) {
  entries_.erase({stream_id, round});
}

std::vector<StallInspector::Stall> StallInspector::Due(Clock::time_point now) {
  std::vector<Stall> due;
  const auto every = std::chrono::duration<double>(settings_.warning_s);
  for (auto& kv : entries_) {
    Entry& e = kv.second;
    if (now - e.first < every) continue;
    if (e.warned.time_since_epoch().count() != 0 && now - e.warned < every) continue;
    e.warned = now;
    due.push_back(Stall{kv.first.first, kv.first.second, e.waiting,
                        std::chrono::duration<double>(now - e.first).count()});
  }
  return due;
}

}  // namespace wagma
