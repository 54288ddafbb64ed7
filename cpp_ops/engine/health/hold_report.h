// The hold report: what an app call that has waited long in a round waits on, told by
// the engines themselves, before any stall warning.
//
// Under wait-avoidance an app waits in a round only on communication (an earlier
// round in flight, a member's data still on its way), never on another rank's app, so
// a wait of seconds is a fault of the engine, the transport or the host, not of
// training pace. The stall inspector speaks only after WAGMA_STALL_WARNING_S (60 s);
// a hold shorter than that left nothing in the log but a slow epoch. So once a call
// has waited WAGMA_HOLD_REPORT_S (default 10 s; 0: off) the waiting rank prints, once
// per round:
//
//   [horovod_wagma rank 0] hold: the application has waited 10.0 s in group round 57
//   of stream 's' (members [0, 1]; joined by the app, activations sent: yes); waits on:
//   receive from rank 1; earlier rounds of the stream in flight here: none
//
// and asks each other member to print its own view of that round (HoldView), which
// says whether that engine joined it, holds its activation, dropped it, or is busy
// with earlier rounds, and what its app is doing. The engine loop's own pauses longer
// than the threshold are reported as such (HoldLoopPauseText): a loop that did not
// run is a hold of every round at once.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/stream_state.h"
#include "transport/transport.h"

namespace wagma {

// What this rank knows of join(): whether it called join() itself, which ranks it
// has heard call it, and how many joins have ended here (the notices' generation).
// Both sides of a hold say it: a member that joined but whose notice or activation
// never reached the waiting rank shows up as a mismatch between the two reports.
struct JoinView {
  bool self_joined = false;
  std::vector<int> known_joined;
  int64_t joins_ended = 0;
};
std::string JoinViewText(const JoinView& j);

// The waiting rank's report on `round` of `s`, whose app has waited `waited_s`.
// (Not const: asking a reduction for its pending messages tests them.)
std::string HoldReportText(int rank, Stream& s, int64_t round, RoundState& rs,
                           double waited_s, const JoinView& joins);

// A member's view of `round` of `s`, asked by `asker` (its hold report).
std::string HoldViewText(int rank, int asker, Stream& s, int64_t round,
                         std::chrono::steady_clock::time_point now, const JoinView& joins);

// The line a rank that called join() prints when a member's hold query names a round
// it had not started and held no activation for: it joins that round now.
std::string HoldJoinText(int rank, int asker, const Stream& s, int64_t round);

// This engine's loop did not run for `paused_s`; `how`: what the thread did meanwhile
// (SchedGapText: busy, starved or asleep), appended as it is.
std::string HoldLoopPauseText(int rank, double paused_s, const std::string& how);

// What one pass of PollControl handled: messages, per kind (ControlKind's number),
// the longest single receive and the longest handling of one message.
struct PollTally {
  int64_t messages = 0;
  std::array<int64_t, 16> by_kind{};
  double longest_receive_s = 0;
  double longest_handling_s = 0;
};
std::string HoldPollText(int rank, double spent_s, const PollTally& tally);

// One part of a loop pass (`part`: "polling control messages", ...) took `seconds`.
std::string HoldLoopPartText(int rank, const char* part, double seconds);

}  // namespace wagma
