#include "core/engine_settings.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace wagma {
namespace {

double EnvDouble(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : fallback;
}

// A non-negative whole number of bytes; "" or an error naming the setting.
std::string EnvBytes(const char* name, size_t* value) {
  const char* v = std::getenv(name);
  if (!v || !*v) return "";
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !(x >= 0) || x > 1e15) {
    return std::string(name) + "='" + v + "' is not a byte count (a whole number >= 0)";
  }
  *value = static_cast<size_t>(x);
  return "";
}

FragmentSettings FragmentsFromEnv() {
  FragmentSettings f;
  f.error = EnvBytes("HOROVOD_WAGMA_FRAGMENT_BYTES", &f.fragment_bytes);
  if (f.error.empty()) f.error = EnvBytes("HOROVOD_WAGMA_FRAGMENT_UP_TO_BYTES", &f.up_to_bytes);
  const char* scope = std::getenv("HOROVOD_WAGMA_FRAGMENT_SCOPE");
  f.scope = scope && *scope ? scope : "remote";
  if (f.error.empty() && f.scope != "remote" && f.scope != "all") {
    f.error = "HOROVOD_WAGMA_FRAGMENT_SCOPE='" + f.scope + "': expected 'remote' or 'all'";
  }
  f.cut_local = f.scope == "all";
  return f;
}

}  // namespace

StallSettings StallSettings::FromEnv() {
  StallSettings s;
  s.warning_s = EnvDouble("WAGMA_STALL_WARNING_S", s.warning_s);
  s.timeout_s = EnvDouble("WAGMA_STALL_TIMEOUT_S", s.timeout_s);
  s.hold_report_s = EnvDouble("WAGMA_HOLD_REPORT_S", s.hold_report_s);
  // Report early enough that the inspector hears from every waiting rank before it
  // warns, but never for the ordinary sub-second waits of a global round.
  double shortest = s.warning_s;
  if (s.timeout_s > 0) shortest = std::min(shortest, s.timeout_s);
  s.report_after_s = std::max(0.05, std::min(1.0, shortest / 4));
  // Probe at a third, blame after another third: the verdict comes before the
  // deadline (stall_inspector.h), for every deadline of 2 s or more.
  s.probe_after_s = std::max(s.report_after_s, shortest / 3);
  // A live engine answers within milliseconds; a second covers a loaded machine.
  s.probe_grace_s = std::max(1.0, s.probe_after_s);
  return s;
}

EngineSettings EngineSettings::FromEnv(bool transport_progresses_on_its_own) {
  EngineSettings s;
  s.thresholds.small_bytes = static_cast<size_t>(
      EnvDouble("HOROVOD_WAGMA_SMALL_BYTES", static_cast<double>(s.thresholds.small_bytes)));
  s.thresholds.pair_scatter_bytes = static_cast<size_t>(EnvDouble(
      "HOROVOD_WAGMA_PAIR_SCATTER_BYTES", static_cast<double>(s.thresholds.pair_scatter_bytes)));
  s.fragments = FragmentsFromEnv();
  s.shutdown_timeout_s = EnvDouble("HOROVOD_WAGMA_SHUTDOWN_TIMEOUT", 30.0);
  // Spinning after activity catches replies sooner only where polling moves the
  // bytes (MPI). On Gloo its device thread moves them, and an engine thread that
  // spins takes the cores that thread and its peers' need: a group round of 33 floats
  // took 1.8 ms at P=2 and 10.1 ms at P=8 spinning, 0.87 and 3.9 ms not (2 cores).
  s.pacer.spin_us = static_cast<int64_t>(
      EnvDouble("HOROVOD_WAGMA_SPIN_US", transport_progresses_on_its_own ? 0 : 200));
  s.pacer.idle_sleep_us = static_cast<int64_t>(EnvDouble("HOROVOD_WAGMA_IDLE_SLEEP_US", 1000));
  s.pacer.caller_progress_us =
      static_cast<int64_t>(EnvDouble("HOROVOD_WAGMA_CALLER_PROGRESS_US", 0));
  const char* grace = std::getenv("HOROVOD_WAGMA_GRACE_FRACTION");
  if (grace && *grace) {
    char* end = nullptr;
    const double f = std::strtod(grace, &end);
    if (end == grace || *end != '\0' || !(f >= 0 && f < 1)) {
      s.grace_error = std::string("HOROVOD_WAGMA_GRACE_FRACTION='") + grace +
                      "' is not a fraction of a step in [0, 1)";
    } else {
      s.grace_fraction = f;
    }
  }
  s.stalls = StallSettings::FromEnv();
  const char* timeline = std::getenv("WAGMA_TIMELINE");
  if (timeline && *timeline) s.timeline_path = timeline;
  // Horovod elastic: each member set's engine writes its own trace (ranks change
  // between member sets, and a file reopened would be truncated): trace.json ->
  // trace.gen2.json, then the rank (trace.gen2.3.json). Set by membership.py.
  const int generation = static_cast<int>(EnvDouble("WAGMA_TIMELINE_GENERATION", 0));
  if (generation > 1 && !s.timeline_path.empty()) {
    const size_t slash = s.timeline_path.find_last_of('/');
    size_t dot = s.timeline_path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
      dot = s.timeline_path.size();
    s.timeline_path.insert(dot, ".gen" + std::to_string(generation));
  }
  const char* elastic = std::getenv("HOROVOD_ELASTIC");
  s.elastic = elastic && std::string(elastic) == "1";
  s.loss_settle_ms = EnvDouble("HOROVOD_WAGMA_LOSS_SETTLE_MS", s.loss_settle_ms);
  s.liveness_s = EnvDouble("HOROVOD_WAGMA_LIVENESS_S", s.liveness_s);
  s.lose_activations_to_joined = static_cast<int>(EnvDouble("WAGMA_TEST_LOSE_ACTIVATIONS", 0));
  if (s.elastic && s.liveness_s > 0) {
    // The heartbeat: a peer silent for 1 s (or a third of the window, if shorter) is
    // probed, so that the verdicts on one cut's peers come at most about 1 s apart,
    // inside the settle window, whatever the liveness window.
    s.stalls.probe_after_s = std::min(
        s.stalls.probe_after_s, std::max(0.5, std::min(s.stalls.report_after_s, s.liveness_s / 3)));
    s.stalls.probe_grace_s = std::min(s.stalls.probe_grace_s, std::max(1.0, s.liveness_s));
  }
  return s;
}

}  // namespace wagma
