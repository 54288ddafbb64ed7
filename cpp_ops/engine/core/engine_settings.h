// EngineSettings: every setting the engine reads from the environment, read in one
// place (EngineSettings::FromEnv) when the engine starts. Each must be the same on
// every rank, like every HOROVOD_* setting; the fragment settings are checked.
//
//  HOROVOD_WAGMA_SMALL_BYTES, _PAIR_SCATTER_BYTES   where reductions change algorithm
//  HOROVOD_WAGMA_FRAGMENT_BYTES, _UP_TO_BYTES, _SCOPE  cross-node message cutting
//  HOROVOD_WAGMA_SHUTDOWN_TIMEOUT                   seconds shutdown waits for peers
//  HOROVOD_WAGMA_SPIN_US, _IDLE_SLEEP_US            the engine thread's idle policy
//  HOROVOD_WAGMA_CALLER_PROGRESS_US                 waiting app threads drive progress
//  HOROVOD_WAGMA_GRACE_FRACTION                     the grace window's cap, in steps
//  WAGMA_STALL_WARNING_S, WAGMA_STALL_TIMEOUT_S     stall warnings and errors
//  WAGMA_TIMELINE                                   Chrome trace path
#pragma once

#include <cstdint>
#include <string>

#include "reduce/group_reduction.h"
#include "reduce/message_cut.h"
#include "core/progress_pacer.h"
#include "health/stall_inspector.h"

namespace wagma {

struct EngineSettings {
  ReductionThresholds thresholds;
  FragmentSettings fragments;
  double shutdown_timeout_s = 30.0;
  PacerSettings pacer;
  // The longest a passive join is held back for the app's fresh value, as a fraction
  // of the app's step on that stream (grace_window.h); 0: never held back.
  double grace_fraction = 0.25;
  std::string grace_error;  // HOROVOD_WAGMA_GRACE_FRACTION is not a number in [0, 1)
  StallSettings stalls;
  std::string timeline_path;  // empty: no trace
  // Horovod elastic (HOROVOD_ELASTIC=1): a lost peer ends every round at once, so that
  // the survivors reset together and the engine restarts over the new member set.
  bool elastic = false;
  // Under elastic, how long the engine waits after the first lost peer before it
  // ends its rounds, so that the losses of one host or one cut are judged together
  // by the majority rule (majority_rule.h).
  // 1.5 s: losses found by silence reach peers up to one probe interval (1 s) apart.
  double loss_settle_ms = 1500.0;
  // Under elastic, a peer whose engine leaves a liveness probe unanswered this long is
  // lost too (no connection closes on a cut link or a stopped host); a peer not heard
  // from for a third of it is probed (a heartbeat). 0: only closed connections count.
  // Long enough that an engine isolated at start (a rare Gloo transport fault the
  // reset cures) is not judged lost at once, short enough that a cut-off minority's
  // verdict stays well inside 30 s (docs/design.md section 6, "Why the liveness
  // window is 10 s"). A closed connection is lost at once whatever this is.
  double liveness_s = 10.0;
  // Tests only (WAGMA_TEST_LOSE_ACTIVATIONS): this many of the activations this rank
  // sends to ranks that called join() in rounds that activate nobody else (blocking
  // global rounds, rounds without wait-avoidance) are not sent, as if the transport
  // had lost them; the joined rank must still serve those rounds (JoinOnHoldQuery).
  int lose_activations_to_joined = 0;

  // `transport_progresses_on_its_own`: see Transport::ProgressesOnItsOwn; the engine
  // thread then does not spin by default (HOROVOD_WAGMA_SPIN_US).
  static EngineSettings FromEnv(bool transport_progresses_on_its_own = false);
};

}  // namespace wagma
