// Unit test of the engine's counters (engine_metrics.h) behind stats()
// (docs/faults.md, "Observability"): staleness_max is the largest staleness of the
// passive joins, not the last one, per stream and overall; staleness_sum and
// passive_joins count every join; hold_reports and loop_pauses count one per report;
// activations_sent counts one per peer told; errors one per failed round.
// Built and run by `make engine-unit-test` (and `make test`).
#include <string>

#include "check.h"
#include "observe/engine_metrics.h"

namespace {

using wagma::EngineMetrics;

// The passive joins come with stalenesses 2, 5, 1 on "w" (the largest in the middle,
// so neither the first nor the last is the max) and 3 on "v".
void TestStalenessMaxIsTheLargestNotTheLast() {
  EngineMetrics m;
  m.PassiveJoin("w", 4, 2, 2, false, 0);
  m.PassiveJoin("w", 5, 5, 5, false, 0);
  m.PassiveJoin("w", 6, 1, 1, false, 0);
  m.PassiveJoin("v", 4, 3, 3, false, 0);
  const wagma::EngineStats e = m.Snapshot();
  CHECK_EQ(e.passive_joins, 4);
  CHECK_EQ(e.staleness_sum, 11);
  CHECK_EQ(e.staleness_max, 5);
  const std::string json = m.Json(e);
  CHECK(Contains(json, "\"w\":{\"rounds\":0,\"global_rounds\":0,\"activations_sent\":0,"
                       "\"passive_joins\":3,\"staleness_sum\":8,\"staleness_max\":5,"));
  CHECK(Contains(json, "\"v\":{\"rounds\":0,\"global_rounds\":0,\"activations_sent\":0,"
                       "\"passive_joins\":1,\"staleness_sum\":3,\"staleness_max\":3,"));
}

// Each held call, each loop pause and each round joined on a hold query counts once.
void TestHoldReportsAndLoopPausesCountEachReport() {
  EngineMetrics m;
  m.HoldReport("w", 3);
  m.HoldReport("v", 7);
  m.LoopPause(2.5);
  m.JoinOnHoldQuery("w", 3);
  const wagma::EngineStats e = m.Snapshot();
  CHECK_EQ(e.hold_reports, 2);
  CHECK_EQ(e.loop_pauses, 1);
  CHECK_EQ(e.joins_on_hold_query, 1);
  CHECK(Contains(m.Json(e), "\"hold_reports\":2,\"loop_pauses\":1,\"joins_on_hold_query\":1}"));
}

// activations_sent counts messages, one per peer told, not one per round: a global
// round at P = 8 tells 7 peers (faults.md: "activation messages this rank sent").
void TestActivationsSentCountsOnePerPeerTold() {
  EngineMetrics m;
  m.ActivationsSent("w", 0, {1, 2, 3, 4, 5, 6, 7}, 0);
  m.ActivationsSent("w", 1, {1}, 0);
  m.ActivationsSent("v", 0, {2, 3}, 0);
  const wagma::EngineStats e = m.Snapshot();
  CHECK_EQ(e.activations_sent, 10);
  const std::string json = m.Json(e);
  CHECK(Contains(json, "\"w\":{\"rounds\":0,\"global_rounds\":0,\"activations_sent\":8,"));
  CHECK(Contains(json, "\"v\":{\"rounds\":0,\"global_rounds\":0,\"activations_sent\":2,"));
}

// errors counts every round of a stream that ended in an error, not whether one did:
// a stream failed from round 4 with rounds 5 and 6 pending reports 3.
void TestErrorsCountEveryFailedRound() {
  EngineMetrics m;
  m.RoundFailed("w", 4, "rank 2 left without join()");
  m.RoundFailed("w", 5, "rank 2 left without join()");
  m.RoundFailed("w", 6, "rank 2 left without join()");
  m.RoundFailed("v", 1, "stalled");
  const std::string json = m.Json(m.Snapshot());
  const size_t w = json.find("\"w\":{"), v = json.find("\"v\":{");
  CHECK(w != std::string::npos && v != std::string::npos);
  CHECK(Contains(json.substr(w, json.find('}', w) - w), "\"errors\":3"));
  CHECK(Contains(json.substr(v, json.find('}', v) - v), "\"errors\":1"));
}

}  // namespace

int main() {
  TestStalenessMaxIsTheLargestNotTheLast();
  TestHoldReportsAndLoopPausesCountEachReport();
  TestActivationsSentCountsOnePerPeerTold();
  TestErrorsCountEveryFailedRound();
  return Report("engine_metrics_test");
}
