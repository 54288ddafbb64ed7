#include "observe/engine_metrics.h"

#include <algorithm>

namespace wagma {
namespace {

std::string RankArray(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return "[" + out + "]";
}

std::string StreamRound(const std::string& stream, int64_t round) {
  return "\"stream\":\"" + JsonEscape(stream) + "\",\"round\":" + std::to_string(round);
}

}  // namespace

void EngineMetrics::LoopPass(int64_t rounds_held, int64_t in_flight) {
  std::lock_guard<std::mutex> lock(mu_);
  ++engine_.loop_iterations;
  engine_.rounds_held = rounds_held;
  engine_.in_flight = in_flight;
}

bool EngineMetrics::reductions_in_flight() {
  std::lock_guard<std::mutex> lock(mu_);
  return engine_.in_flight > 0;
}

void EngineMetrics::Slept() {
  std::lock_guard<std::mutex> lock(mu_);
  ++engine_.sleeps;
}

void EngineMetrics::StreamCalled(const std::string& stream) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_[stream];
}

void EngineMetrics::RoundsSkipped(const std::string& stream, int64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_[stream].rounds_skipped += n;
}

void EngineMetrics::GraceHeld(const std::string& stream) {
  std::lock_guard<std::mutex> lock(mu_);
  ++streams_[stream].grace_held;
}

void EngineMetrics::GraceCaught(const std::string& stream) {
  std::lock_guard<std::mutex> lock(mu_);
  ++streams_[stream].grace_caught;
}

void EngineMetrics::EarlyActivation() {
  std::lock_guard<std::mutex> lock(mu_);
  ++engine_.early_activations;
}

void EngineMetrics::ActivationReceived(const std::string& stream, int64_t round, int from) {
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "activation", "activation_received", Timeline::NowUs(),
                    StreamRound(stream, round) + ",\"from\":" + std::to_string(from));
}

void EngineMetrics::ActivationsSent(const std::string& stream, int64_t round,
                                    const std::vector<int>& to, int64_t at_us) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    engine_.activations_sent += static_cast<int64_t>(to.size());
    streams_[stream].activations_sent += static_cast<int64_t>(to.size());
  }
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "activation", "activation_sent", at_us,
                    StreamRound(stream, round) + ",\"to\":" + RankArray(to));
}

void EngineMetrics::ReductionStarted(const std::string& stream, int64_t bytes_sent) {
  std::lock_guard<std::mutex> lock(mu_);
  engine_.bytes_sent += bytes_sent;
  streams_[stream].bytes_sent += bytes_sent;
}

void EngineMetrics::ReductionCompleted(const std::string& stream, int64_t round, bool global,
                                       bool passive, const std::vector<int>& members,
                                       int64_t started_us, int64_t messages_cut) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    engine_.messages_cut += messages_cut;
    ++engine_.rounds_completed;
  }
  if (!timeline_.enabled()) return;
  timeline_.Span(Timeline::kEngine, "reduction", stream, started_us, Timeline::NowUs(),
                 "\"round\":" + std::to_string(round) + ",\"kind\":\"" +
                     (global ? "global" : "group") + "\",\"passive\":" +
                     (passive ? "true" : "false") + ",\"members\":" + RankArray(members));
}

void EngineMetrics::PassiveJoin(const std::string& stream, int64_t round, int64_t staleness,
                                int64_t age, bool stale_in_rounds, int64_t at_us) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++engine_.passive_joins;
    engine_.staleness_sum += staleness;
    engine_.staleness_max = std::max(engine_.staleness_max, staleness);
    StreamStats& st = streams_[stream];
    ++st.passive_joins;
    st.staleness_sum += staleness;
    st.staleness_max = std::max(st.staleness_max, staleness);
  }
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "join", "passive_join", at_us,
                    StreamRound(stream, round) + ",\"staleness\":" + std::to_string(staleness) +
                        ",\"age\":" + std::to_string(age) + ",\"stale_in_rounds\":" +
                        (stale_in_rounds ? "true" : "false"));
}

void EngineMetrics::PassiveContribution(const std::string& stream, bool left_out,
                                        bool stale_in_rounds, bool has_age, int64_t age) {
  std::lock_guard<std::mutex> lock(mu_);
  StreamStats& st = streams_[stream];
  if (left_out) {
    ++st.rounds_left_out;
    ++engine_.rounds_left_out;
    return;
  }
  if (stale_in_rounds) ++st.rounds_kept_ahead;
  if (has_age) ++st.age_histogram[age];
}

void EngineMetrics::AppRoundDone(const std::string& stream, int64_t round, bool global,
                                 bool has_callback, int64_t enqueued_us, int64_t call_us) {
  const int64_t now_us = Timeline::NowUs();
  {
    std::lock_guard<std::mutex> lock(mu_);
    engine_.call_wait_us += call_us;
    StreamStats& st = streams_[stream];
    ++st.rounds;
    if (global) ++st.global_rounds;
    // Completion runs a callback: the framework waited from the call on.
    if (has_callback) (global ? st.global_wait_us : st.group_wait_us) += call_us;
  }
  if (!timeline_.enabled()) return;
  const std::string args = "\"round\":" + std::to_string(round);
  timeline_.Span(Timeline::kApp, "app", stream, enqueued_us, now_us,
                 args + ",\"kind\":\"" + (global ? "global" : "group") + "\"");
  if (has_callback) timeline_.Span(Timeline::kApp, "wait", stream, enqueued_us, now_us, args);
}

void EngineMetrics::AppWaited(const std::string& stream, int64_t round, bool global,
                              int64_t from_us, int64_t waited_us) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    StreamStats& st = streams_[stream];
    (global ? st.global_wait_us : st.group_wait_us) += waited_us;
  }
  if (!timeline_.enabled()) return;
  timeline_.Span(Timeline::kApp, "wait", stream, from_us, from_us + waited_us,
                 "\"round\":" + std::to_string(round));
}

void EngineMetrics::RoundFailed(const std::string& stream, int64_t round,
                                const std::string& error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++streams_[stream].errors;
  }
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "fault", "round_failed", Timeline::NowUs(),
                    StreamRound(stream, round) + ",\"error\":\"" + JsonEscape(error) + "\"");
}

void EngineMetrics::PeerLeft(int rank) {
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "lifecycle", "peer_left", Timeline::NowUs(),
                    "\"rank\":" + std::to_string(rank));
}

void EngineMetrics::PeerLost(int rank) {
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "lifecycle", "peer_lost", Timeline::NowUs(),
                    "\"rank\":" + std::to_string(rank));
}

void EngineMetrics::MembershipChanged(const std::string& args_json) {
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "lifecycle", "membership_change", Timeline::NowUs(),
                    args_json);
}

void EngineMetrics::StallWarning(const std::string& stream, int64_t round,
                                 const std::string& missing_json) {
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "fault", "stall_warning", Timeline::NowUs(),
                    StreamRound(stream, round) + ",\"missing\":" + missing_json);
}

void EngineMetrics::AppAway(const std::string& stream, int rank, double away_s,
                            int64_t left_out) {
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "fault", "app_away", Timeline::NowUs(),
                    "\"stream\":\"" + JsonEscape(stream) + "\",\"rank\":" +
                        std::to_string(rank) + ",\"away_s\":" + std::to_string(away_s) +
                        ",\"left_out\":" + std::to_string(left_out));
}

void EngineMetrics::HoldReport(const std::string& stream, int64_t round) {
  CountRoundFault(&EngineStats::hold_reports, "hold", stream, round);
}

void EngineMetrics::JoinOnHoldQuery(const std::string& stream, int64_t round) {
  CountRoundFault(&EngineStats::joins_on_hold_query, "join_on_hold_query", stream, round);
}

void EngineMetrics::CountRoundFault(int64_t EngineStats::*counter, const char* event,
                                    const std::string& stream, int64_t round) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++(engine_.*counter);
  }
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "fault", event, Timeline::NowUs(),
                    StreamRound(stream, round));
}

void EngineMetrics::LoopPause(double paused_s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++engine_.loop_pauses;
  }
  if (!timeline_.enabled()) return;
  timeline_.Instant(Timeline::kEngine, "fault", "loop_pause", Timeline::NowUs(),
                    "\"paused_s\":" + std::to_string(paused_s));
}

EngineStats EngineMetrics::Snapshot() {
  std::lock_guard<std::mutex> lock(mu_);
  return engine_;
}

std::string EngineMetrics::Json(const EngineStats& e) {
  std::string out = "{\"engine\":{";
  const std::pair<const char*, int64_t> fields[] = {
      {"rounds_completed", e.rounds_completed}, {"passive_joins", e.passive_joins},
      {"activations_sent", e.activations_sent}, {"loop_iterations", e.loop_iterations},
      {"sleeps", e.sleeps}, {"bytes_sent", e.bytes_sent}, {"messages_cut", e.messages_cut},
      {"staleness_sum", e.staleness_sum}, {"staleness_max", e.staleness_max},
      {"rounds_left_out", e.rounds_left_out}, {"early_activations", e.early_activations},
      {"call_wait_us", e.call_wait_us}, {"pending_handles", e.pending_handles},
      {"rounds_held", e.rounds_held}, {"queue_depth", e.queue_depth},
      {"in_flight", e.in_flight}, {"hold_reports", e.hold_reports},
      {"loop_pauses", e.loop_pauses}, {"joins_on_hold_query", e.joins_on_hold_query}};
  bool first = true;
  for (const auto& f : fields) {
    out += std::string(first ? "" : ",") + "\"" + f.first + "\":" + std::to_string(f.second);
    first = false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  return out + "},\"streams\":" + StreamStatsJson(streams_) + "}";
}

}  // namespace wagma
