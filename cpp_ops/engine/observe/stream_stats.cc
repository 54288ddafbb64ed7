#include "observe/stream_stats.h"

#include "observe/timeline.h"  // JsonEscape

namespace wagma {

std::string StreamStatsJson(const std::map<std::string, StreamStats>& stats) {
  std::string out = "{";
  bool first = true;
  for (const auto& kv : stats) {
    const StreamStats& s = kv.second;
    if (!first) out += ",";
    first = false;
    out += "\"" + JsonEscape(kv.first) + "\":{";
    out += "\"rounds\":" + std::to_string(s.rounds);
    out += ",\"global_rounds\":" + std::to_string(s.global_rounds);
    out += ",\"activations_sent\":" + std::to_string(s.activations_sent);
    out += ",\"passive_joins\":" + std::to_string(s.passive_joins);
    out += ",\"staleness_sum\":" + std::to_string(s.staleness_sum);
    out += ",\"staleness_max\":" + std::to_string(s.staleness_max);
    out += ",\"group_wait_us\":" + std::to_string(s.group_wait_us);
    out += ",\"global_wait_us\":" + std::to_string(s.global_wait_us);
    out += ",\"bytes_sent\":" + std::to_string(s.bytes_sent);
    out += ",\"errors\":" + std::to_string(s.errors);
    out += ",\"rounds_skipped\":" + std::to_string(s.rounds_skipped);
    out += ",\"rounds_left_out\":" + std::to_string(s.rounds_left_out);
    out += ",\"rounds_kept_ahead\":" + std::to_string(s.rounds_kept_ahead);
    out += ",\"grace_held\":" + std::to_string(s.grace_held);
    out += ",\"grace_caught\":" + std::to_string(s.grace_caught);
    out += ",\"age_histogram\":{";
    bool first_age = true;
    for (const auto& age : s.age_histogram) {
      out += std::string(first_age ? "" : ",") + "\"" + std::to_string(age.first) +
             "\":" + std::to_string(age.second);
      first_age = false;
    }
    out += "}";
    out += "}";
  }
  return out + "}";
}

}  // namespace wagma
