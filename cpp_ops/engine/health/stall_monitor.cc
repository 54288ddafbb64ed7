#include "health/stall_monitor.h"

#include <algorithm>
#include <cstdio>

#include "core/stream_spec.h"

namespace wagma {

bool StallMonitor::InspectionDue(Clock::time_point now) {
  if (now - last_inspection_ < std::chrono::milliseconds(50)) return false;
  const SchedTimes sched = sched_clock_.Read();
  if (last_inspection_ != Clock::time_point{} && now - last_inspection_ > kListenGap) {
    liveness_.Discount(now - last_inspection_);
    const double gap_s = std::chrono::duration<double>(now - last_inspection_).count();
    if (gap_s > loop_pause_.seconds) {
      loop_pause_ = {gap_s, SchedGapText(sched_at_last_inspection_, sched, gap_s)};
    }
  }
  last_inspection_ = now;
  sched_at_last_inspection_ = sched;
  return true;
}

// Liveness probes: a stall error names the ranks whose engines stopped answering (a
// stopped process, a dead host, a cut link), not just the members missing from the
// waiting round, which may be survivors stuck behind them.
std::vector<int> StallMonitor::ProbesDue(double longest_wait_s, bool heartbeat,
                                         const std::vector<int>& live_peers,
                                         Clock::time_point now) {
  const StallSettings& cfg = settings();
  if (!heartbeat && longest_wait_s < cfg.probe_after_s) return {};
  return liveness_.ProbeDue(live_peers, now, std::max(0.5, cfg.probe_after_s));
}

std::vector<int> StallMonitor::Unresponsive(const std::vector<int>& live_peers,
                                           Clock::time_point now) const {
  double silent_s = 0;
  return liveness_.Unresponsive(live_peers, now, settings().probe_grace_s, &silent_s);
}

std::string StallMonitor::LastHeardNote(int peer, Clock::time_point now) const {
  const double since = liveness_.SinceHeard(peer, now);
  if (since < 0) return " (never heard from)";
  char text[64];
  std::snprintf(text, sizeof(text), " (last heard %.1f s ago)", since);
  return text;
}

std::string StallMonitor::UnresponsiveNote(const std::vector<int>& live_peers,
                                           Clock::time_point now) const {
  double silent_s = 0;
  const std::vector<int> lost =
      liveness_.Unresponsive(live_peers, now, settings().probe_grace_s, &silent_s);
  if (lost.empty()) return "";
  char tail[160];
  std::snprintf(tail, sizeof(tail),
                " (no answer to a liveness probe for %.1f s: stopped, dead or unreachable)",
                silent_s);
  return "; ranks not responding: " + RankList(lost) + tail;
}

bool StallMonitor::RegistrationWarningDue(const std::string& key, double waited_s,
                                          Clock::time_point now) {
  const double warning_s = settings().warning_s;
  if (waited_s < warning_s) return false;
  auto warned = registration_warned_.find(key);
  if (warned != registration_warned_.end() &&
      now - warned->second < std::chrono::duration<double>(warning_s)) {
    return false;
  }
  registration_warned_[key] = now;
  return true;
}

std::string RankList(const std::vector<int>& ranks) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "]";
}

std::string StallTimeoutText(double waited_s, double timeout_s, const std::string& stream,
                             bool registered, bool global, int64_t round) {
  char head[160];
  std::snprintf(head, sizeof(head), "stalled: waited %.1f s (WAGMA_STALL_TIMEOUT_S=%g) in ",
                waited_s, timeout_s);
  std::string text = head;
  text += !registered ? "round 0 of stream '" + NameForMessage(stream) +
                            "', for every member to call it"
                      : std::string(global ? "global" : "group") + " round " +
                            std::to_string(round) + " of stream '" + NameForMessage(stream) +
                            "'";
  return text;
}

std::string StallNoteText(bool global, const std::vector<int>& missing, int inspector_rank) {
  return std::string(global ? "ranks that have not entered it: " : "ranks not waiting in it: ") +
         RankList(missing) + " (stall report of rank " + std::to_string(inspector_rank) + ")";
}

}  // namespace wagma
