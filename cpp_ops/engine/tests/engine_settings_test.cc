// EngineSettings::FromEnv: the engine thread's spin follows the transport (it spins
// only where polling moves the bytes), and HOROVOD_WAGMA_SPIN_US overrides it on both.
// Every other setting has the default that docs/api.md and docs/faults.md give (each
// test run sets most of them, so only this test sees the defaults), and its variable
// changes it. The idle-sleep cap is checked through the pacer that applies it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "check.h"
#include "core/engine_settings.h"
#include "core/progress_pacer.h"

using wagma::EngineSettings;
using wagma::ProgressPacer;

namespace {

const char* const kVariables[] = {
    "HOROVOD_WAGMA_SPIN_US",           "HOROVOD_WAGMA_SHUTDOWN_TIMEOUT",
    "HOROVOD_WAGMA_IDLE_SLEEP_US",     "HOROVOD_WAGMA_CALLER_PROGRESS_US",
    "WAGMA_STALL_WARNING_S",           "WAGMA_STALL_TIMEOUT_S",
    "WAGMA_HOLD_REPORT_S",             "HOROVOD_WAGMA_LOSS_SETTLE_MS",
    "HOROVOD_WAGMA_LIVENESS_S",        "HOROVOD_WAGMA_SMALL_BYTES",
    "HOROVOD_WAGMA_PAIR_SCATTER_BYTES", "HOROVOD_ELASTIC",
    "HOROVOD_WAGMA_FRAGMENT_BYTES",    "HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES",
    "HOROVOD_WAGMA_FRAGMENT_SCOPE",    "WAGMA_TIMELINE",
    "WAGMA_TIMELINE_GENERATION",
};

void UnsetAll() {
  for (const char* v : kVariables) unsetenv(v);
}

// The sleep the pacer picks after `idle_ms` of an idle engine (no rounds in flight).
long long IdleSleepUs(const EngineSettings& s, int idle_ms) {
  ProgressPacer pacer(s.pacer);
  const auto t0 = ProgressPacer::Clock::now();
  pacer.Resume(t0);
  const ProgressPacer::Pause p = pacer.AfterPass(/*progressed=*/false, /*busy=*/false,
                                                 t0 + std::chrono::milliseconds(idle_ms));
  CHECK(p.kind == ProgressPacer::Pause::Kind::kSleep);
  return p.sleep_us;
}

// The transport picks the spin; nothing else.
void TestSpinFollowsTheTransport() {
  UnsetAll();
  CHECK_EQ(EngineSettings::FromEnv(/*transport_progresses_on_its_own=*/false).pacer.spin_us, 200);
  CHECK_EQ(EngineSettings::FromEnv(/*transport_progresses_on_its_own=*/true).pacer.spin_us, 0);
  setenv("HOROVOD_WAGMA_SPIN_US", "50", 1);
  CHECK_EQ(EngineSettings::FromEnv(false).pacer.spin_us, 50);
  CHECK_EQ(EngineSettings::FromEnv(true).pacer.spin_us, 50);
  unsetenv("HOROVOD_WAGMA_SPIN_US");
  // The rest of the pacer does not depend on the transport.
  CHECK_EQ(EngineSettings::FromEnv(true).pacer.idle_sleep_us,
           EngineSettings::FromEnv(false).pacer.idle_sleep_us);
}

// With nothing set: api.md's table (shutdown 30 s, small 65536 B, pair 8 MiB, idle
// sleep 1000 us, caller progress 0) and faults.md's (stall warning 60 s, stall timeout
// off, hold report 10 s, liveness 10 s, loss settle 1500 ms).
void TestDefaults() {
  UnsetAll();
  for (bool own : {false, true}) {
    const EngineSettings s = EngineSettings::FromEnv(own);
    CHECK(s.shutdown_timeout_s == 30.0);
    CHECK_EQ(s.thresholds.small_bytes, 65536);
    CHECK_EQ(s.thresholds.pair_scatter_bytes, 8 * 1024 * 1024);
    CHECK_EQ(s.pacer.idle_sleep_us, 1000);
    CHECK_EQ(s.pacer.caller_progress_us, 0);
    CHECK(s.stalls.warning_s == 60.0);
    CHECK(s.stalls.timeout_s == 0.0);  // off: the engine raises only for timeout_s > 0
    CHECK(s.stalls.hold_report_s == 10.0);
    CHECK(s.liveness_s == 10.0);
    CHECK(s.loss_settle_ms == 1500.0);
    CHECK(!s.elastic);
    // api.md's table: cut cross-node messages into 64512-byte pieces, up to 4 MiB,
    // remote peers only.
    CHECK_EQ(s.fragments.fragment_bytes, 64512u);
    CHECK_EQ(s.fragments.up_to_bytes, 4u << 20);
    CHECK(s.fragments.scope == "remote" && !s.fragments.cut_local);
  }
  // StallSettings read on their own (the inspector's) agree.
  const wagma::StallSettings stalls = wagma::StallSettings::FromEnv();
  CHECK(stalls.warning_s == 60.0 && stalls.timeout_s == 0.0 && stalls.hold_report_s == 10.0);
}

// Each variable changes its setting, and only it.
void TestVariablesChangeThem() {
  UnsetAll();
  setenv("HOROVOD_WAGMA_SHUTDOWN_TIMEOUT", "7.5", 1);
  setenv("HOROVOD_WAGMA_SMALL_BYTES", "1024", 1);
  setenv("HOROVOD_WAGMA_PAIR_SCATTER_BYTES", "4096", 1);
  setenv("HOROVOD_WAGMA_IDLE_SLEEP_US", "300", 1);
  setenv("HOROVOD_WAGMA_CALLER_PROGRESS_US", "40", 1);
  setenv("WAGMA_STALL_WARNING_S", "12", 1);
  setenv("WAGMA_STALL_TIMEOUT_S", "20", 1);
  setenv("WAGMA_HOLD_REPORT_S", "3", 1);
  setenv("HOROVOD_WAGMA_LIVENESS_S", "4", 1);
  setenv("HOROVOD_WAGMA_LOSS_SETTLE_MS", "250", 1);
  setenv("HOROVOD_WAGMA_FRAGMENT_BYTES", "2048", 1);
  setenv("HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES", "1048576", 1);
  setenv("HOROVOD_WAGMA_FRAGMENT_SCOPE", "all", 1);
  const EngineSettings s = EngineSettings::FromEnv(false);
  CHECK(s.shutdown_timeout_s == 7.5);
  CHECK_EQ(s.thresholds.small_bytes, 1024);
  CHECK_EQ(s.thresholds.pair_scatter_bytes, 4096);
  CHECK_EQ(s.pacer.idle_sleep_us, 300);
  CHECK_EQ(s.pacer.caller_progress_us, 40);
  CHECK_EQ(s.pacer.spin_us, 200);
  CHECK(s.stalls.warning_s == 12.0);
  CHECK(s.stalls.timeout_s == 20.0);
  CHECK(s.stalls.hold_report_s == 3.0);
  CHECK(s.liveness_s == 4.0);
  CHECK(s.loss_settle_ms == 250.0);
  // The fragment size and the largest message cut are separate settings.
  CHECK(s.fragments.error.empty());
  CHECK_EQ(s.fragments.fragment_bytes, 2048u);
  CHECK_EQ(s.fragments.up_to_bytes, 1048576u);
  CHECK(s.fragments.scope == "all" && s.fragments.cut_local);
  UnsetAll();
}

// faults.md, "A lost rank": probes go out once a call has waited a third of the
// shorter of WAGMA_STALL_WARNING_S and WAGMA_STALL_TIMEOUT_S, and a peer silent that
// third again, but at least 1 s, after its probe is named. (warning, timeout or off,
// probe after, grace): the shorter is either variable; the 1 s floor bites below 3 s.
void TestProbesAtAThirdOfTheShorterDeadline() {
  struct Case {
    const char* warning;
    const char* timeout;
    double probe_after_s;
    double probe_grace_s;
  };
  const Case cases[] = {{"60", nullptr, 20.0, 20.0}, {"60", "6", 2.0, 2.0},
                        {"9", "30", 3.0, 3.0},      {"60", "3", 1.0, 1.0},
                        {"2", nullptr, 2.0 / 3, 1.0}, {"60", "1.5", 0.5, 1.0}};
  for (const Case& c : cases) {
    UnsetAll();
    setenv("WAGMA_STALL_WARNING_S", c.warning, 1);
    if (c.timeout) setenv("WAGMA_STALL_TIMEOUT_S", c.timeout, 1);
    const wagma::StallSettings s = EngineSettings::FromEnv(false).stalls;
    const bool ok = std::fabs(s.probe_after_s - c.probe_after_s) < 1e-9 &&
                    std::fabs(s.probe_grace_s - c.probe_grace_s) < 1e-9;
    if (!ok) {
      std::fprintf(stderr, "warning %s timeout %s: probe after %.4f s, grace %.4f s; "
                   "expected %.4f s, %.4f s\n", c.warning, c.timeout ? c.timeout : "off",
                   s.probe_after_s, s.probe_grace_s, c.probe_after_s, c.probe_grace_s);
    }
    CHECK(ok);
  }
  UnsetAll();
}

// faults.md, "A lost rank under Horovod elastic": there the probes are a heartbeat to
// peers not heard from for a second, and a peer that leaves one unanswered for
// HOROVOD_WAGMA_LIVENESS_S (default 10) is lost; at 0 only closed connections count, and
// the stall settings stay those of a plain run (a third of WAGMA_STALL_WARNING_S's 60).
// (HOROVOD_WAGMA_LIVENESS_S or unset, probe after, grace)
void TestElasticHeartbeatEverySecondLostAfterTheLivenessWindow() {
  struct Case {
    const char* liveness;
    double probe_after_s;
    double probe_grace_s;
  };
  const Case cases[] = {{nullptr, 1.0, 10.0}, {"5", 1.0, 5.0}, {"0", 20.0, 20.0}};
  for (const Case& c : cases) {
    UnsetAll();
    setenv("HOROVOD_ELASTIC", "1", 1);
    if (c.liveness) setenv("HOROVOD_WAGMA_LIVENESS_S", c.liveness, 1);
    const EngineSettings s = EngineSettings::FromEnv(/*transport_progresses_on_its_own=*/true);
    CHECK(s.elastic);
    const bool ok = std::fabs(s.stalls.probe_after_s - c.probe_after_s) < 1e-9 &&
                    std::fabs(s.stalls.probe_grace_s - c.probe_grace_s) < 1e-9;
    if (!ok) {
      std::fprintf(stderr, "elastic, liveness %s: probe after %.4f s, grace %.4f s; "
                   "expected %.4f s, %.4f s\n", c.liveness ? c.liveness : "unset",
                   s.stalls.probe_after_s, s.stalls.probe_grace_s, c.probe_after_s,
                   c.probe_grace_s);
    }
    CHECK(ok);
  }
  UnsetAll();
}

// HOROVOD_WAGMA_IDLE_SLEEP_US caps the idle engine's sleep: a quarter of the idle time
// (here 250 ms after 1 s idle) is cut to the cap, 1000 us by default.
void TestIdleSleepIsCapped() {
  UnsetAll();
  CHECK_EQ(IdleSleepUs(EngineSettings::FromEnv(false), 1000), 1000);
  CHECK_EQ(IdleSleepUs(EngineSettings::FromEnv(true), 1000), 1000);
  setenv("HOROVOD_WAGMA_IDLE_SLEEP_US", "300", 1);
  CHECK_EQ(IdleSleepUs(EngineSettings::FromEnv(false), 1000), 300);
  UnsetAll();
}

// elastic.md: each member set after the first writes its own trace, the generation
// before the file's extension (trace.json -> trace.gen2.json); a dot in a directory is
// not an extension, at any depth, and a path without an extension gets it at the end.
void TestTimelineGenerationGoesIntoTheFileName() {
  struct Case {
    const char* path;
    const char* generation;
    const char* expected;
  };
  const Case cases[] = {
      {"/tmp/trace.json", "2", "/tmp/trace.gen2.json"},
      {"trace.json", "3", "trace.gen3.json"},
      {"trace", "2", "trace.gen2"},
      {"/tmp/run.1/trace", "2", "/tmp/run.1/trace.gen2"},
      {"./out/trace", "4", "./out/trace.gen4"},
      {"/a.b/c.d/trace", "2", "/a.b/c.d/trace.gen2"},
      {"/a.b/c.d/trace.json", "12", "/a.b/c.d/trace.gen12.json"},
      {"/tmp/run.1/trace.json", "1", "/tmp/run.1/trace.json"},  // the first keeps its name
      {"/tmp/run.1/trace.json", "0", "/tmp/run.1/trace.json"},
  };
  for (const Case& c : cases) {
    UnsetAll();
    setenv("WAGMA_TIMELINE", c.path, 1);
    setenv("WAGMA_TIMELINE_GENERATION", c.generation, 1);
    CHECK(EngineSettings::FromEnv(false).timeline_path == c.expected);
  }
  UnsetAll();
}

}  // namespace

int main() {
  TestSpinFollowsTheTransport();
  TestDefaults();
  TestVariablesChangeThem();
  TestIdleSleepIsCapped();
  TestProbesAtAThirdOfTheShorterDeadline();
  TestElasticHeartbeatEverySecondLostAfterTheLivenessWindow();
  TestTimelineGenerationGoesIntoTheFileName();
  return Report("engine_settings_test");
}
