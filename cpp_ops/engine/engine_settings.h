// EngineSettings: every setting the engine reads from the environment, read in one
// place (EngineSettings::FromEnv) when the engine starts. Each must be the same on
// every rank, like every HOROVOD_* setting; the fragment settings are checked.
//
//  HOROVOD_WAGMA_SMALL_BYTES, _PAIR_SCATTER_BYTES   where reductions change algorithm
//  HOROVOD_WAGMA_FRAGMENT_BYTES, _UP_TO_BYTES, _SCOPE  cross-node message cutting
//  HOROVOD_WAGMA_SHUTDOWN_TIMEOUT                   seconds shutdown waits for peers
//  HOROVOD_WAGMA_SPIN_US, _IDLE_SLEEP_US            the engine thread's idle policy
//  HOROVOD_WAGMA_CALLER_PROGRESS_US                 waiting app threads drive progress
//  WAGMA_STALL_WARNING_S, WAGMA_STALL_TIMEOUT_S     stall warnings and errors
//  WAGMA_TIMELINE                                   Chrome trace path
#pragma once

#include <cstdint>
#include <string>

#include "group_reduction.h"
#include "message_cut.h"
#include "progress_pacer.h"
#include "stall_inspector.h"

namespace wagma {

struct EngineSettings {
  ReductionThresholds thresholds;
  FragmentSettings fragments;
  double shutdown_timeout_s = 30.0;
  PacerSettings pacer;
  StallSettings stalls;
  std::string timeline_path;  // empty: no trace
  // Horovod elastic (HOROVOD_ELASTIC=1): a lost peer ends every round at once, so that
  // the survivors reset together and the engine restarts over the new member set.
  bool elastic = false;

  static EngineSettings FromEnv();
};

}  // namespace wagma
