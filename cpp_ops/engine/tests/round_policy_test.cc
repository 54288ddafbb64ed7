// Unit test of the round policy (round_policy.h): the rules of docs/design.md,
// section 2, without MPI. Built and run by `make engine-unit-test` (and `make test`).
// Each check names the rule it pins down; a wrong rule makes at least one fail.
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "rounds/round_plan.h"
#include "rounds/round_policy.h"

namespace {

using wagma::ActivationAction;
using wagma::Averaging;
using wagma::CompletedRoundFate;
using wagma::OutputFacts;
using wagma::OutputFormula;
using wagma::StreamView;

// A stream as the policy sees it, set up by hand.
class FakeStream : public StreamView {
 public:
  explicit FakeStream(int64_t next_app_round) : next_(next_app_round) {}

  // Joined by the engine without the app, and completed: a held result.
  FakeStream& ServedHeld(int64_t r) { return Put(r, /*joined=*/true, false, true, false); }
  // Joined by the engine without the app, still in flight.
  FakeStream& ServedInFlight(int64_t r) { return Put(r, true, false, false, false); }
  // Joined passively, completed with an error the app has not heard.
  FakeStream& ServedFailed(int64_t r) { return Put(r, true, false, true, true); }
  // The app entered it (and so joined it).
  FakeStream& AppEntered(int64_t r) { return Put(r, true, true, false, false); }
  FakeStream& Drop(int64_t r) {
    held_.erase(r);
    dropped_.insert(r);
    return *this;
  }
  FakeStream& Activate(int64_t r) {
    activated_.insert(r);
    return *this;
  }
  FakeStream& SoloRound(int64_t r) {
    solo_.insert(r);
    return *this;
  }

  bool Find(int64_t round, Held* out) const override {
    auto it = held_.find(round);
    if (it == held_.end()) return false;
    *out = it->second;
    return true;
  }
  bool Dropped(int64_t round) const override { return dropped_.count(round) > 0; }
  bool Activated(int64_t round) const override { return activated_.count(round) > 0; }
  bool Solo(int64_t round) const override { return solo_.count(round) > 0; }
  int64_t NewestRound() const override {
    int64_t newest = -1;
    if (!held_.empty()) newest = std::max(newest, held_.rbegin()->first);
    if (!dropped_.empty()) newest = std::max(newest, *dropped_.rbegin());
    return newest;
  }
  int64_t next_app_round() const override { return next_; }

  // Completed results held for the app (not entered by it).
  int HeldResults() const {
    int n = 0;
    for (const auto& kv : held_) n += kv.second.completed && !kv.second.app_entered ? 1 : 0;
    return n;
  }

 private:
  FakeStream& Put(int64_t r, bool joined, bool app, bool completed, bool failed) {
    Held h;
    h.joined = joined;
    h.app_entered = app;
    h.completed = completed;
    h.failed = failed;
    held_[r] = h;
    return *this;
  }
  int64_t next_;
  std::map<int64_t, Held> held_;
  std::set<int64_t> dropped_, activated_, solo_;
};

// --- 2.1 Which rounds are global ----------------------------------------------------

void TestRoundPlan() {
  // tau = 4: rounds 0, 3, 7, 11 are global; the others cycle through the phases.
  CHECK(wagma::PlanRound(0, 4, 2).global);
  CHECK(!wagma::PlanRound(1, 4, 2).global);
  CHECK(wagma::PlanRound(3, 4, 2).global);
  CHECK(wagma::PlanRound(7, 4, 2).global);
  CHECK_EQ(wagma::PlanRound(1, 4, 2).phase, 0);
  CHECK_EQ(wagma::PlanRound(2, 4, 2).phase, 1);
  CHECK_EQ(wagma::PlanRound(4, 4, 2).phase, 0);  // k = 4 - 1 - 1 = 2
  CHECK_EQ(wagma::PlanRound(5, 4, 2).phase, 1);
  // tau = 1: every round is global.
  CHECK(wagma::PlanRound(5, 1, 3).global);
}

// --- 2.8 Which round an app call takes, and what it skips ------------------------------

void TestAppTakesNextRoundOutsideWaitAvoidingGlobal() {
  FakeStream s(5);
  s.ServedHeld(5).ServedHeld(6).ServedHeld(7);
  // Blocking global rounds: never skip, however much the engine served.
  auto c = wagma::ChooseAppRound(s, /*wait_avoiding_global=*/false, /*assigned=*/true);
  CHECK_EQ(c.round, 5);
  CHECK_EQ(c.skipped, 0);
  // Before round 0 is validated (no id yet): never skip.
  c = wagma::ChooseAppRound(s, true, /*assigned=*/false);
  CHECK_EQ(c.round, 5);
}

void TestAppTakesNextRoundWhenNothingServed() {
  FakeStream s(5);
  auto c = wagma::ChooseAppRound(s, true, true);
  CHECK_EQ(c.round, 5);
  CHECK_EQ(c.skipped, 0);
  // A round the app itself entered is not served passively: it is not skipped.
  FakeStream t(5);
  t.AppEntered(5);
  CHECK(!wagma::ServedPassively(t, 5));
  CHECK_EQ(wagma::ChooseAppRound(t, true, true).round, 5);
}

void TestAppTakesNewestServedRound() {
  FakeStream s(5);
  s.ServedHeld(5).ServedHeld(6).ServedHeld(7);
  const auto c = wagma::ChooseAppRound(s, true, true);
  CHECK_EQ(c.round, 7);    // the newest of the contiguous served run
  CHECK_EQ(c.skipped, 2);  // 5 and 6 are skipped
}

void TestSkipRunStopsAtRoundNotJoined() {
  // 7 was not joined here (its group would wait for this rank there): the run ends at
  // 6 even though 8 was served.
  FakeStream s(5);
  s.ServedHeld(5).ServedHeld(6).ServedHeld(8);
  const auto c = wagma::ChooseAppRound(s, true, true);
  CHECK_EQ(c.round, 6);
  CHECK_EQ(c.skipped, 1);
}

void TestSkipCountsDroppedAndInFlightRounds() {
  // Dropped rounds and rounds in flight were served too.
  FakeStream s(5);
  s.Drop(5).ServedInFlight(6).ServedHeld(7);
  CHECK(wagma::ServedPassively(s, 5));
  CHECK(wagma::ServedPassively(s, 6));
  CHECK(!wagma::ServedPassively(s, 8));
  CHECK_EQ(wagma::ChooseAppRound(s, true, true).round, 7);
}

void TestAppEntersNextRoundWhenPeerWaits() {
  // A peer already activated the round after the run: enter it with the fresh input.
  FakeStream s(5);
  s.ServedHeld(5).ServedHeld(6).ServedHeld(7).Activate(8);
  const auto c = wagma::ChooseAppRound(s, true, true);
  CHECK_EQ(c.round, 8);
  CHECK_EQ(c.skipped, 3);
}

void TestAppEntersNextRoundWhenNewestResultNotHeld() {
  // The run's newest result was replaced (dropped): no result to hand over, so the
  // app enters the next round.
  FakeStream s(5);
  s.ServedHeld(5).ServedHeld(6).Drop(7);
  CHECK_EQ(wagma::ChooseAppRound(s, true, true).round, 8);
}

void TestSkipStopsAtFailedRound() {
  // The app must hear the error: the run stops at the failed round, even with a peer
  // waiting beyond.
  FakeStream s(5);
  s.ServedHeld(5).ServedFailed(6).ServedHeld(7).Activate(7).Activate(8);
  const auto c = wagma::ChooseAppRound(s, true, true);
  CHECK_EQ(c.round, 6);
  CHECK_EQ(c.skipped, 1);
}

void TestSoloRoundsPassedOnlyWithTwoServedBeyond() {
  // Round 5 has this rank's group to itself. One served round beyond it: a peer one
  // round ahead in lockstep must not make the app skip.
  FakeStream one(5);
  one.SoloRound(5).ServedHeld(6);
  CHECK_EQ(wagma::ChooseAppRound(one, true, true).round, 5);
  // Two served beyond: the run passes the solo round.
  FakeStream two(5);
  two.SoloRound(5).ServedHeld(6).ServedHeld(7);
  CHECK_EQ(wagma::ChooseAppRound(two, true, true).round, 7);
  // A round not joined and not solo still stops the run.
  FakeStream stop(5);
  stop.ServedHeld(6).ServedHeld(7);
  CHECK_EQ(wagma::ChooseAppRound(stop, true, true).round, 5);
}

// --- 2.8 Leaving out values too stale --------------------------------------------------

void TestStaleInRounds() {
  // max_staleness = 3; the app last entered round 10.
  CHECK(!wagma::StaleInRounds(true, false, 13, 10, 3));  // 3 rounds old: within the bound
  CHECK(wagma::StaleInRounds(true, false, 14, 10, 3));   // 4 rounds old: a candidate
  // Only with wait-avoiding global rounds.
  CHECK(!wagma::StaleInRounds(false, false, 14, 10, 3));
  // A rank that joined or is leaving serves its final model: always counts.
  CHECK(!wagma::StaleInRounds(true, true, 100, 10, 3));
  // max_staleness = 0: every served value is a candidate, even the output of the
  // app's last round (it holds no samples the round has not counted).
  CHECK(wagma::StaleInRounds(true, false, 11, 10, 0));
}

void TestInclusionCodes() {
  CHECK_EQ(wagma::EncodeInclusion(7, false), 7);
  CHECK(wagma::EncodeInclusion(7, true) < 0);
  CHECK(wagma::EncodeInclusion(0, true) < 0);  // step 0, stale, still distinguishable
  CHECK_EQ(wagma::StepsOfInclusion(wagma::EncodeInclusion(7, true)), 7);
  CHECK_EQ(wagma::StepsOfInclusion(wagma::EncodeInclusion(0, true)), 0);
}

void TestLeaveOutNeedsStaleInRoundsAndBehindInSteps() {
  const int64_t max_staleness = 3;
  // Member 0: 10 steps, fresh. Member 1: stale in rounds and 5 steps behind: left out.
  // Member 2: stale in rounds but only 1 step behind (its app waited, e.g. in a
  // Horovod collective): kept. Member 3: 9 steps behind but not stale in rounds: kept.
  const std::vector<int64_t> codes = {
      wagma::EncodeInclusion(10, false), wagma::EncodeInclusion(5, true),
      wagma::EncodeInclusion(9, true), wagma::EncodeInclusion(1, false)};
  const auto inc = wagma::DecideInclusion(codes, max_staleness);
  CHECK_EQ(inc.most_steps, 10);
  CHECK(inc.included[0]);
  CHECK(!inc.included[1]);
  CHECK(inc.included[2]);
  CHECK(inc.included[3]);
  CHECK_EQ(inc.count, 3);
}

void TestLeaveOutBoundaryIsStrict() {
  // Exactly max_staleness steps behind still counts; one more is left out.
  const auto at = wagma::DecideInclusion(
      {wagma::EncodeInclusion(10, false), wagma::EncodeInclusion(7, true)}, 3);
  CHECK(at.included[1]);
  const auto past = wagma::DecideInclusion(
      {wagma::EncodeInclusion(10, false), wagma::EncodeInclusion(6, true)}, 3);
  CHECK(!past.included[1]);
  CHECK_EQ(past.count, 1);
}

void TestZeroStalenessLeavesOutAnyServedValueBehind() {
  // One step behind is out; a served value whose app is as far as the most advanced
  // (it waited in a Horovod collective) stays.
  const auto inc = wagma::DecideInclusion(
      {wagma::EncodeInclusion(10, false), wagma::EncodeInclusion(9, true),
       wagma::EncodeInclusion(10, true)}, 0);
  CHECK(inc.included[0]);
  CHECK(!inc.included[1]);
  CHECK(inc.included[2]);
  CHECK_EQ(inc.count, 2);
}

void TestMostAdvancedMemberAlwaysKept() {
  // Everyone stale in rounds: the most advanced member stays, so the set is never empty.
  const auto inc = wagma::DecideInclusion(
      {wagma::EncodeInclusion(3, true), wagma::EncodeInclusion(20, true)}, 2);
  CHECK(!inc.included[0]);
  CHECK(inc.included[1]);
  CHECK_EQ(inc.count, 1);
  CHECK_EQ(inc.most_steps, 20);
}

void TestContributionAge() {
  CHECK_EQ(wagma::ContributionAge(true, 6, 2), 2);   // the smaller of rounds and steps
  CHECK_EQ(wagma::ContributionAge(true, 1, 4), 1);
  CHECK_EQ(wagma::ContributionAge(false, 6, 2), 6);  // rounds only otherwise
}

// --- 2.8 One result held per stream: supersede --------------------------------------

void TestFateOfCompletedRound() {
  using F = CompletedRoundFate;
  // The app entered it: its output is computed now.
  CHECK(wagma::FateOfCompletedRound(true, false, 8, 5, true, false) == F::kFinishApp);
  // This rank called join(): nobody collects it.
  CHECK(wagma::FateOfCompletedRound(false, true, 8, 5, true, false) == F::kDrop);
  // The app already skipped past it.
  CHECK(wagma::FateOfCompletedRound(false, false, 4, 5, true, false) == F::kDrop);
  // Wait-avoiding global rounds: held, replacing older served results.
  CHECK(wagma::FateOfCompletedRound(false, false, 8, 5, true, false) == F::kSupersedeOlder);
  // A failed round is held for the app to hear, and replaces nothing.
  CHECK(wagma::FateOfCompletedRound(false, false, 8, 5, true, true) == F::kHold);
  // Blocking global rounds: the app collects every round, so each is held.
  CHECK(wagma::FateOfCompletedRound(false, false, 8, 5, false, false) == F::kHold);
}

void TestSupersedeKeepsOneResult() {
  FakeStream s(5);
  s.ServedHeld(5).ServedHeld(6).ServedHeld(7).ServedHeld(8);
  const std::vector<int64_t> gone = wagma::SupersededRounds(s, 8);
  CHECK(gone == std::vector<int64_t>({5, 6, 7}));
  for (int64_t r : gone) s.Drop(r);
  CHECK_EQ(s.HeldResults(), 1);  // one result per stream
  // The app then takes round 8, skipping the dropped rounds.
  const auto c = wagma::ChooseAppRound(s, true, true);
  CHECK_EQ(c.round, 8);
  CHECK_EQ(c.skipped, 3);
}

void TestSupersedeSparesWhatTheAppWillNotSkip() {
  // Round 6 was never joined here: the app will stop at 5, so 5 must stay held.
  FakeStream gap(5);
  gap.ServedHeld(5).ServedHeld(7).ServedHeld(8);
  CHECK(wagma::SupersededRounds(gap, 8) == std::vector<int64_t>({7}));
  // In flight and failed rounds are not dropped (the app must hear the error).
  FakeStream mixed(5);
  mixed.ServedHeld(5).ServedFailed(6).ServedInFlight(7).ServedHeld(8);
  CHECK(wagma::SupersededRounds(mixed, 8) == std::vector<int64_t>({5}));
  // Rounds below next_app_round are not the app's to collect any more.
  FakeStream past(7);
  past.ServedHeld(5).ServedHeld(6).ServedHeld(7).ServedHeld(8);
  CHECK(wagma::SupersededRounds(past, 8) == std::vector<int64_t>({7}));
}

// --- 2.5 Activations -------------------------------------------------------------------

void TestLaggingAppKeepsEveryDroppedRoundItMaySkip() {
  // An app held 39 rounds in a Horovod collective while its engine served them: every
  // one from next_app_round on stays remembered (keep = 36 must not cut the run), so
  // the app skips the whole run instead of entering round 60 afresh and waiting for
  // peers that served it long ago.
  CHECK_EQ(wagma::ForgetDroppedBelow(60, 98, /*app_done=*/false, 36), 60);
  CHECK_EQ(wagma::ForgetDroppedBelow(60, 10000, false, 36), 60);
  // A rank that joined: its app calls no more, only recent rounds matter.
  CHECK_EQ(wagma::ForgetDroppedBelow(60, 98, /*app_done=*/true, 36), 62);
  // The skip itself, with the run remembered: the newest served result.
  FakeStream s(60);
  for (int64_t r = 60; r < 98; ++r) s.Drop(r);
  s.ServedHeld(98);
  CHECK_EQ(wagma::ChooseAppRound(s, true, true).round, 98);
}

void TestActivation() {
  CHECK(wagma::OnActivation(false, false, false) == ActivationAction::kJoin);
  CHECK(wagma::OnActivation(true, false, false) == ActivationAction::kDiscard);
  CHECK(wagma::OnActivation(false, true, false) == ActivationAction::kDiscard);
  // The freshest value: earlier rounds in flight complete first.
  CHECK(wagma::OnActivation(false, false, true) == ActivationAction::kWait);
  CHECK(wagma::OnActivation(true, false, true) == ActivationAction::kDiscard);
}

// A hold query stands in for a lost activation only at a rank that called join(), for
// a round it has not joined, holds no activation for and that has not failed.
void TestJoinOnHoldQuery() {
  CHECK(wagma::JoinOnHoldQuery(true, false, false, false));
  CHECK(!wagma::JoinOnHoldQuery(false, false, false, false));  // its app enters the round
  CHECK(!wagma::JoinOnHoldQuery(true, true, false, false));    // joined already
  CHECK(!wagma::JoinOnHoldQuery(true, false, true, false));    // its activation is held
  CHECK(!wagma::JoinOnHoldQuery(true, false, false, true));    // the stream failed there
}

// --- 2.4 Published versions --------------------------------------------------------------

void TestPublishedVersions() {
  // An output of round r ranks between the inputs of r and r + 1.
  CHECK(wagma::InputVersion(4) < wagma::OutputVersion(4));
  CHECK(wagma::OutputVersion(4) < wagma::InputVersion(5));
  CHECK_EQ(wagma::PublishedStaleness(5, wagma::OutputVersion(4)), 0);  // fresh
  CHECK_EQ(wagma::PublishedStaleness(5, wagma::InputVersion(4)), 0);
  CHECK_EQ(wagma::PublishedStaleness(5, wagma::OutputVersion(2)), 2);
  CHECK_EQ(wagma::PublishedStaleness(0, -1), 0);  // nothing published yet
}

// --- 2.6 Averaging: the base rule of 'local', and the output formula ---------------------

void TestLocalTakesFreshPastOneResult() {
  // The value predates no applied result, or one: 'local' keeps its base.
  CHECK(wagma::RuleForRound(Averaging::kLocal, 0) == Averaging::kLocal);
  CHECK(wagma::RuleForRound(Averaging::kLocal, 1) == Averaging::kLocal);
  // More than one: the 'fresh' rule.
  CHECK(wagma::RuleForRound(Averaging::kLocal, 2) == Averaging::kFresh);
  CHECK(wagma::RuleForRound(Averaging::kLocal, 7) == Averaging::kFresh);
  // Other rules are as configured.
  CHECK(wagma::RuleForRound(Averaging::kFresh, 7) == Averaging::kFresh);
  CHECK(wagma::RuleForRound(Averaging::kPaper, 7) == Averaging::kPaper);
  // 'follow' takes 'fresh''s output; what differs is its passive joins' value.
  CHECK(wagma::RuleForRound(Averaging::kFollow, 0) == Averaging::kFresh);
  CHECK(wagma::RuleForRound(Averaging::kFollow, 3) == Averaging::kFresh);
}

void TestFollowPublishesServedResults() {
  // A passive round's result becomes the published value under 'follow' only...
  CHECK(wagma::PublishServedResult(Averaging::kFollow, true, false, false));
  CHECK(!wagma::PublishServedResult(Averaging::kFresh, true, false, false));
  CHECK(!wagma::PublishServedResult(Averaging::kLocal, true, false, false));
  CHECK(!wagma::PublishServedResult(Averaging::kDelta, true, false, false));
  CHECK(!wagma::PublishServedResult(Averaging::kPaper, true, false, false));
  // ...not a round the app entered (its output is published when the app takes it),
  // not a rank serving its final model, not a failed round.
  CHECK(!wagma::PublishServedResult(Averaging::kFollow, false, false, false));
  CHECK(!wagma::PublishServedResult(Averaging::kFollow, true, true, false));
  CHECK(!wagma::PublishServedResult(Averaging::kFollow, true, false, true));
}

void TestOutputFormula() {
  OutputFacts f;
  f.mean_in_output = true;
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kMeanAlreadyInOutput);

  // Blocking global round: the exact mean whatever the rule.
  f = OutputFacts();
  f.global = true;
  f.rule = Averaging::kPaper;
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kMean);
  // Wait-avoiding global round served passively: the averaging rule applies.
  f.wait_avoiding_global = true;
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kPaper);
  f.contributed_x = true;  // ... unless the app's own input went in
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kMean);

  // Group rounds.
  f = OutputFacts();
  f.rule = Averaging::kPaper;
  f.contributed_x = true;
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kPaper);  // paper even with c == x
  f.rule = Averaging::kFresh;
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kMean);  // c == x: the plain mean
  f.contributed_x = false;
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kFreshCorrection);
  f.self_included = false;  // fresh, left out: x joins as one more member
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kPaper);
  f.rule = Averaging::kLocal;  // local, left out or not: m + (x - base)
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kLocalCorrection);
  f.self_included = true;
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kLocalCorrection);
  // A passive round whose value predates two results: 'fresh', not 'local'.
  f.rule = wagma::RuleForRound(Averaging::kLocal, 2);
  CHECK(wagma::ChooseOutput(f) == OutputFormula::kFreshCorrection);
}

void TestReduceIntoOutput() {
  // The app's input went in and the plain mean is the answer.
  CHECK(wagma::ReduceIntoOutput(true, false, Averaging::kFresh, true, false));
  // A passive value went in: the rule needs m apart.
  CHECK(!wagma::ReduceIntoOutput(false, false, Averaging::kFresh, true, false));
  // 'paper' group rounds need m apart; a global round takes the mean under any rule.
  CHECK(!wagma::ReduceIntoOutput(true, false, Averaging::kPaper, false, false));
  CHECK(wagma::ReduceIntoOutput(true, true, Averaging::kPaper, false, false));
  // In place, in a mode that joins passively: x must stay intact.
  CHECK(!wagma::ReduceIntoOutput(true, false, Averaging::kLocal, true, true));
  CHECK(wagma::ReduceIntoOutput(true, false, Averaging::kLocal, false, true));
}

}  // namespace

int main() {
  TestRoundPlan();
  TestAppTakesNextRoundOutsideWaitAvoidingGlobal();
  TestAppTakesNextRoundWhenNothingServed();
  TestAppTakesNewestServedRound();
  TestSkipRunStopsAtRoundNotJoined();
  TestSkipCountsDroppedAndInFlightRounds();
  TestAppEntersNextRoundWhenPeerWaits();
  TestAppEntersNextRoundWhenNewestResultNotHeld();
  TestSkipStopsAtFailedRound();
  TestSoloRoundsPassedOnlyWithTwoServedBeyond();
  TestStaleInRounds();
  TestInclusionCodes();
  TestLeaveOutNeedsStaleInRoundsAndBehindInSteps();
  TestLeaveOutBoundaryIsStrict();
  TestZeroStalenessLeavesOutAnyServedValueBehind();
  TestMostAdvancedMemberAlwaysKept();
  TestContributionAge();
  TestFateOfCompletedRound();
  TestSupersedeKeepsOneResult();
  TestSupersedeSparesWhatTheAppWillNotSkip();
  TestLaggingAppKeepsEveryDroppedRoundItMaySkip();
  TestActivation();
  TestJoinOnHoldQuery();
  TestPublishedVersions();
  TestLocalTakesFreshPastOneResult();
  TestFollowPublishesServedResults();
  TestOutputFormula();
  TestReduceIntoOutput();
  return Report("round_policy_test");
}
