// Per-stream state kept by the engine's loop (docs/design.md, sections 2.4 to 2.8).
//
// A stream's rounds live in `rounds` from the moment either the app enters them or an
// activation makes this rank join, until the app has collected the result. The
// published value is the newest of: inputs the app entered (version 2r) and outputs of
// rounds the app entered (version 2r + 1), so an older round completing late never
// overwrites a newer input. An input is published by reference (it stays valid until
// its round completes, when that round's output replaces it); outputs are copied,
// since the app may change them as soon as it has them.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reduce/buffer.h"
#include "rounds/grace_window.h"
#include "reduce/group_reduction.h"
#include "rounds/group_schedule.h"
#include "rounds/round_plan.h"
#include "rounds/round_policy.h"
#include "core/stream_spec.h"

namespace wagma {

// One app call of the op: the round it entered, its input and where to write. As
// in Horovod, both buffers belong to the caller, who keeps them alive and leaves the
// input unchanged until the handle completes; they may be the same (in place).
struct AppCall {
  std::chrono::steady_clock::time_point enqueued;
  int64_t enqueued_us = 0;  // Timeline clock
  int64_t handle = 0;
  const void* input = nullptr;  // the fresh input x
  void* output = nullptr;
  // Completion runs a callback (TensorFlow's async kernel): the framework waits
  // from the call on, so that whole time counts as waiting.
  bool has_callback = false;
};

struct RoundState {
  int64_t round = 0;
  RoundPlan plan;
  std::vector<int> members;  // sorted ranks
  int my_index = 0;

  bool joined = false;
  bool passive = false;      // joined by the engine on an activation
  // Passive, with a value older than max_staleness rounds (wait-avoiding global
  // rounds): `age_rounds` since the app last entered. Left out of the mean (this rank
  // still receives it) when its app is also more than max_staleness steps behind the
  // round's most advanced member (`steps_behind`, known once completed).
  bool stale_in_rounds = false;
  // Passive, serving this rank's final model (it had called join(), or was shutting
  // down, when its engine joined the round): the value always counts and has no age.
  // Kept from the passive join, since the join may end before the round completes.
  bool final_model = false;
  int64_t age_rounds = 0;
  int64_t steps_behind = 0;
  // Once completed: how many members the mean is over, and whether this rank is one.
  int included = 0;
  bool self_included = true;
  bool activated_all = false;  // activations went to every other member
  int64_t joined_at_us = 0;  // Timeline clock
  const void* contribution = nullptr;  // c: the app's input, or passive_contribution
  Buffer passive_contribution;         // copy of the published value at a passive join
  // The "local" rule's base for a passive contribution c: c plus every correction
  // (output - input) the app applied after c was taken. The app's own progress since c
  // is x - base, not x - c: c may be the input of an app round still in flight, whose
  // output then replaced it in the app's model. Empty while no correction came.
  Buffer local_base;
  // How many results the app applied after c was taken. Past one, the "local" rule
  // takes the "fresh" one here (RuleForRound, round_policy.h).
  int results_since_join = 0;
  std::unique_ptr<GroupReduction> reduction;  // set while in flight

  bool completed = false;
  // m, the group (or global) mean: written straight into the app's output when that
  // is the answer (mean_in_output), else held here until the app collects it.
  Buffer mean;
  bool mean_in_output = false;

  std::optional<AppCall> call;  // set once the app has entered this round

  std::string error;  // the round failed before the app collected it
  bool stall_reported = false;  // told the inspector this rank waits here
  bool hold_reported = false;   // printed the hold report (hold_report.h)
  std::string stall_note;       // the inspector's list of missing ranks

  bool in_flight() const { return joined && !completed; }
};

struct Stream {
  StreamSpec spec;
  uint64_t fingerprint = 0;  // spec.Fingerprint(), sent with every activation
  int id = -1;  // assigned by the registrar at round 0
  // When the id arrived: a round-0 call waits through registration first, and that wait
  // is the registrar's to report (CheckRegistrationStalls), not a round's stall or hold.
  std::chrono::steady_clock::time_point registered_at;
  int my_index = 0;  // this rank's position in spec.members
  const GroupSchedule* schedule = nullptr;
  int64_t next_app_round = 0;
  // The round the app last entered (or, skipping, was served by): a passive join's
  // contribution is that many rounds old (docs/design.md, section 2.8: age in rounds).
  int64_t last_app_round = -1;
  int64_t app_calls = 0;  // the app's steps on this stream: staleness in steps
  // When the app last called the stream, and how many rounds its engine has since
  // joined with a value left out of the mean: a live rank whose app stays away while
  // its engine is left out is reported by name (nobody waits for it).
  std::chrono::steady_clock::time_point app_called_at;
  int64_t left_out_since_app_call = 0;
  // The latest such join: the peers still run the stream (a stream the app is done
  // with, e.g. a finished optimizer's, is not reported).
  std::chrono::steady_clock::time_point left_out_at;
  std::chrono::steady_clock::time_point app_away_warned_at;
  int64_t last_joined_round = -1;  // for the goodbye: rounds this rank still serves
  const void* published = nullptr;  // published_copy, or an app input in flight
  Buffer published_copy;
  int64_t published_version = -1;
  std::map<int64_t, RoundState> rounds;
  // 'delta' only: the sum of (m - c) over completed rounds this rank counted in that
  // its app skips (served while it computed). Added to the next result it collects,
  // or the members' moves would no longer sum to zero.
  Buffer skipped_delta;
  std::set<int64_t> activations;  // rounds others activated that this rank has not joined
  // How long a passive join of the app's next round may wait for the app
  // (grace_window.h), and the round last held back that way (counted once).
  GraceWindow grace;
  int64_t grace_held_round = -1;
  // Rounds that completed passively and were dropped because no app will collect them
  // (this rank joined; or, with wait-avoiding global rounds, a newer served round
  // replaced them): late activations must not start them again, and a lagging app
  // skips them. Bounded by Drop() (ForgetDroppedBelow, round_policy.h).
  std::set<int64_t> dropped;
  // `app_done`: this rank joined, its app calls no more rounds.
  void Drop(int64_t round, bool app_done) {
    rounds.erase(round);
    dropped.insert(round);
    const int64_t keep =
        4 * static_cast<int64_t>(std::max(spec.config.sync_period, spec.config.max_staleness)) + 16;
    const int64_t horizon =
        ForgetDroppedBelow(next_app_round, *dropped.rbegin(), app_done, keep);
    while (!dropped.empty() && *dropped.begin() < horizon) dropped.erase(dropped.begin());
  }
  // Whether this rank has joined round `round`: in progress here, or gone from
  // `rounds` because the app collected it or it was dropped. An activation for such
  // a round must not start it again.
  bool Joined(int64_t round) const {
    auto it = rounds.find(round);
    if (it != rounds.end()) return it->second.joined;
    return round < next_app_round || dropped.count(round) > 0;
  }
  // Set when the stream failed (round 0 rejected it, or a later call mismatched).
  // Rounds before error_from_round still complete: a slower rank may not have
  // reached them yet, and the failing rank took part in them.
  std::string error;
  int64_t error_from_round = 0;
  bool FailedAt(int64_t round) const { return !error.empty() && round >= error_from_round; }
};

// The round policy's view of a stream (round_policy.h).
class StreamRoundsView : public StreamView {
 public:
  explicit StreamRoundsView(const Stream& s) : s_(s) {}
  bool Find(int64_t round, Held* out) const override {
    auto it = s_.rounds.find(round);
    if (it == s_.rounds.end()) return false;
    const RoundState& rs = it->second;
    out->joined = rs.joined;
    out->app_entered = rs.call.has_value();
    out->completed = rs.completed;
    out->failed = !rs.error.empty();
    return true;
  }
  bool Dropped(int64_t round) const override { return s_.dropped.count(round) > 0; }
  bool Activated(int64_t round) const override { return s_.activations.count(round) > 0; }
  bool Solo(int64_t round) const override {
    const RoundPlan plan =
        PlanRound(round, s_.spec.config.sync_period, s_.schedule->num_phases());
    return !plan.global && s_.schedule->GroupOf(plan.phase, s_.my_index).size() == 1;
  }
  int64_t NewestRound() const override {
    int64_t newest = -1;
    if (!s_.rounds.empty()) newest = std::max(newest, s_.rounds.rbegin()->first);
    if (!s_.dropped.empty()) newest = std::max(newest, *s_.dropped.rbegin());
    return newest;
  }
  int64_t next_app_round() const override { return s_.next_app_round; }

 private:
  const Stream& s_;
};

}  // namespace wagma
