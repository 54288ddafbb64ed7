// RoundPolicy: the round rules of docs/design.md, section 2, as pure functions of a
// stream's state that return decisions. No transport, no clock, no locks: the engine
// gathers the facts, asks, and acts (sends, drops, writes). The unit test
// (tests/round_policy_test.cc, `make engine-unit-test`) checks each rule here.
//
// Rules, by section of docs/design.md:
//  2.4  published versions: an input of round r is version 2r, its output 2r + 1, so
//       a late round never overwrites a newer input (InputVersion, OutputVersion);
//  2.5  an activation is joined at once, unless joined already or beyond the rounds a
//       goodbye promised; but first this stream's earlier rounds in flight here
//       complete, so the freshest value goes in (OnActivation);
//  2.6  the averaging rule and the base of 'local' (RuleForRound, ChooseOutput,
//       ReduceIntoOutput);
//  2.8  wait-avoiding global rounds: which round an app call takes and what it skips
//       (ChooseAppRound), leaving out values too stale (StaleInRounds,
//       DecideInclusion), one result held per stream (FateOfCompletedRound,
//       SupersededRounds), which dropped rounds to remember (ForgetDroppedBelow).
#pragma once

#include <cstdint>
#include <vector>

#include "rounds/averaging_rule.h"
#include "core/stream_spec.h"

namespace wagma {

// What the policy reads of one stream, as this rank sees it. The engine adapts its
// Stream (stream_state.h); the unit test fakes one.
class StreamView {
 public:
  virtual ~StreamView() = default;
  // A round the stream holds: entered by the app or joined by the engine, and not yet
  // collected or dropped.
  struct Held {
    bool joined = false;       // this rank's engine (or app) has contributed
    bool app_entered = false;  // the app called it
    bool completed = false;
    bool failed = false;       // completed with an error the app has not heard
  };
  // Whether round `round` is held; if so, *out describes it.
  virtual bool Find(int64_t round, Held* out) const = 0;
  // Completed passively and dropped: nobody will collect it, it must not start again.
  virtual bool Dropped(int64_t round) const = 0;
  // A peer activated it and this rank has not joined it yet.
  virtual bool Activated(int64_t round) const = 0;
  // A group round in which this rank's group is this rank alone (P not a power of S):
  // nobody waits for it there, and it returns the app's own input.
  virtual bool Solo(int64_t round) const = 0;
  // The newest round held or dropped (-1: none).
  virtual int64_t NewestRound() const = 0;
  // The round the app calls next if nothing is skipped.
  virtual int64_t next_app_round() const = 0;
};

// --- 2.4 Published values ----------------------------------------------------------

inline int64_t InputVersion(int64_t round) { return 2 * round; }
inline int64_t OutputVersion(int64_t round) { return 2 * round + 1; }
// Rounds by which a value of `published_version` predates round `round`: an output of
// round - 1 is fresh (0).
int64_t PublishedStaleness(int64_t round, int64_t published_version);

// --- 2.5 Activations ---------------------------------------------------------------

enum class ActivationAction {
  kDiscard,  // joined already, or beyond the last round this rank's goodbye listed
  kWait,     // an earlier round of the stream is in flight here: let it complete first
  kJoin,     // join it now, passively, with the published value
};
ActivationAction OnActivation(bool joined, bool beyond_goodbye, bool earlier_in_flight);

// A member waits in round `round` and asks this rank for its view (a hold query,
// hold_report.h). A rank that called join() serves every round it is a member of, so
// if it has not started the round and holds no activation for it, the query itself
// stands in for the activation that never came: without this a lost activation to a
// joined rank holds a blocking round forever (seen once in CI, Gloo, 4 ranks: the
// three others waited 300 s in a blocking global round that the joined rank 0 had not
// started). Not for a rank still training: its app enters the round itself.
bool JoinOnHoldQuery(bool self_joined, bool round_joined, bool activation_held, bool failed);

// --- 2.8 Which round an app call takes ----------------------------------------------

// Wait-avoiding global rounds, this rank joined `round` passively (held, in flight or
// dropped): a lagging app may skip it.
bool ServedPassively(const StreamView& s, int64_t round);

struct AppRoundChoice {
  int64_t round = 0;    // the round that serves the call
  int64_t skipped = 0;  // rounds [next_app_round, round) the app passes over
};
// The next round; or, with wait-avoiding global rounds once the stream has its id,
// the newest round of the contiguous run its engine already served, passing solo
// rounds only when at least two served rounds lie beyond, stopping at a failed one;
// or the round after that run when a peer already waits there or the run's newest
// result is no longer held.
AppRoundChoice ChooseAppRound(const StreamView& s, bool wait_avoiding_global, bool assigned);

// --- 2.8 Leaving out values too stale -----------------------------------------------

// A passive join of `round` contributes a value older than max_staleness rounds: a
// candidate for leaving out. Never for a rank that serves its final model (joined or
// leaving): no app's progress is at stake.
bool StaleInRounds(bool wait_avoiding_global, bool serves_final_model, int64_t round,
                   int64_t last_app_round, int64_t max_staleness);

// What each member tells the others before a round's data: its app's steps, and
// whether its value is a candidate (negative code: -steps - 1).
int64_t EncodeInclusion(int64_t steps, bool stale_in_rounds);
int64_t StepsOfInclusion(int64_t code);

struct Inclusion {
  std::vector<bool> included;  // by member index
  int count = 0;               // at least 1: the most advanced member stays
  int64_t most_steps = 0;      // the most advanced member's steps
};
// A candidate is left out only when its app is also more than max_staleness steps
// behind the most advanced member. Every member decides from the same codes alike.
Inclusion DecideInclusion(const std::vector<int64_t>& codes, int64_t max_staleness);

// Age of a passive contribution in the sense of max_staleness, for statistics: rounds
// since the app last entered, or with wait-avoiding global rounds the smaller of that
// and the steps its app is behind the round's most advanced member.
int64_t ContributionAge(bool wait_avoiding_global, int64_t age_rounds, int64_t steps_behind);

// --- 2.8 One result held per stream ---------------------------------------------------

enum class CompletedRoundFate {
  kFinishApp,        // the app entered it: compute its output now
  kDrop,             // nobody will collect it (this rank joined, or its app skipped it)
  kSupersedeOlder,   // held for the app; older served rounds it replaces are dropped
  kHold,             // held for the app
};
CompletedRoundFate FateOfCompletedRound(bool app_entered, bool self_joined, int64_t round,
                                        int64_t next_app_round, bool wait_avoiding_global,
                                        bool failed);
// Held rounds that completed round `round` supersedes: completed without error, not
// entered by the app, older than `round` but within the run of served rounds that
// ends at it (the app will skip them all).
std::vector<int64_t> SupersededRounds(const StreamView& s, int64_t round);

// The dropped rounds below the returned round may be forgotten. A rank whose app may
// still call keeps every one from next_app_round on, however far its app lags: it
// skips them when it returns, and one forgotten would be entered afresh and wait for
// peers that served it long ago (a hang, measured: P=4, S=4, an app held 0.47 s in a
// Horovod allreduce while the slow rank drove 39 rounds). Below next_app_round they
// count as joined anyway. A rank that joined (its app is done) keeps only the newest
// `keep`, for late activations.
int64_t ForgetDroppedBelow(int64_t next_app_round, int64_t newest_dropped, bool app_done,
                           int64_t keep);

// --- 2.6 Averaging -------------------------------------------------------------------

// The rule a round uses (the configured rule's round_rule, averaging_rule.h): 'local'
// takes 'fresh' for a passive round whose value predates more than one result the app
// applied since, 'follow' outputs as 'fresh'.
Averaging RuleForRound(Averaging configured, int results_since_join);

// Whether a completed round's result becomes this rank's published value although its
// app did not enter the round: for a rule that publishes served results ('follow'),
// passive rounds that did not fail, and never for a rank serving its final model
// (joined or leaving).
bool PublishServedResult(Averaging configured, bool passive, bool final_model, bool failed);

// The output formula of a completed round the app entered: the exact mean where it
// answers (the reduction wrote it, or a global round that took x or blocked), else
// the rule's own (AveragingRule::output).
struct OutputFacts {
  bool mean_in_output = false;
  bool global = false;
  bool wait_avoiding_global = false;
  bool self_included = true;
  bool contributed_x = false;  // this rank's counted contribution equals x
  Averaging rule = Averaging::kFresh;  // RuleForRound's answer
};
OutputFormula ChooseOutput(const OutputFacts& f);

// Whether the reduction may write the mean straight into the app's output: the app's
// own input went in, the plain mean is the answer (a global round, or a rule whose
// output is the mean when x went in: not 'paper'), and no passive join may still read
// the input (an in-place call in a mode that joins passively keeps x intact for
// 'local' and for copies).
bool ReduceIntoOutput(bool app_input_contributed, bool global, Averaging configured,
                      bool joins_passively, bool in_place);

}  // namespace wagma
