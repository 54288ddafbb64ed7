// Unit test of the texts the engine prints or raises about faults (docs/faults.md, rows
// F8, F11-F14, F49-F52b of docs/claims.md), whole, for many cases: which rank left or
// stopped (rank 0, a middle one, the last), at which round, how many rounds and ranks
// are missing. The multi-rank tests see a few of these cases through real faults
// (tests/test_report_properties.py); here every branch of each text is matched exactly:
//   - PeerRoster::MissingPeer: "rank R left without join(): its engine shut down after
//     round L of stream 'S', and round N needs it (...)", the lost rank's, the first
//     departed member named;
//   - StallTimeoutText, StallNoteText, RankList, StallMonitor's UnresponsiveNote and
//     LastHeardNote: the stall error, the inspector's note, the liveness notes;
//   - the hold report (hold_report.h): the waiting rank's report, each member's view,
//     the joined rank's "joining it now", the loop pause, JoinViewText;
//   - SchedGapText's numbers;
//   - EngineMetrics: hold_reports, loop_pauses and joins_on_hold_query are engine-wide
//     and cumulative, `errors` per stream.
// Built and run by `make engine-unit-test` (and `make test`).
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "observe/engine_metrics.h"
#include "health/hold_report.h"
#include "transport/peer_roster.h"
#include "health/stall_monitor.h"
#include "core/stream_state.h"
#include "health/thread_schedstat.h"

using namespace wagma;

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// CHECK that `got` is exactly `want`, printing both when not.
#define CHECK_TEXT(got, want)                                                              \
  do {                                                                                     \
    const std::string g_ = (got), w_ = (want);                                             \
    if (g_ != w_) std::fprintf(stderr, "  got:  %s\n  want: %s\n", g_.c_str(), w_.c_str()); \
    CHECK(g_ == w_);                                                                       \
  } while (0)

const std::string kJoinAdvice = " (a rank that runs out of data must call join())";

// --- early exit: PeerRoster::MissingPeer -----------------------------------------------

std::string LeftText(int rank, int64_t last, const std::string& stream, int64_t round) {
  return "rank " + std::to_string(rank) + " left without join(): its engine shut down after "
         "round " + std::to_string(last) + " of stream '" + stream + "', and round " +
         std::to_string(round) + " needs it" + kJoinAdvice;
}

// Which rank leaves (0, a middle one, the last of P = 3 and 4), after which round, and
// the rounds after: the last round it served completes (empty), every later round
// with it as a member fails naming it, its last round of that stream and that round.
void TestEveryLeaverAndRoundIsNamed() {
  for (int size : {3, 4}) {
    std::vector<int> all;
    for (int r = 0; r < size; ++r) all.push_back(r);
    for (int leaver : {0, size / 2, size - 1}) {
      for (int64_t last : {0, 1, 6, 41}) {
        PeerRoster roster;
        roster.MarkDeparted(leaver, {{3, last}, {5, last + 2}});
        for (int64_t round = 0; round <= last; ++round) {
          CHECK(roster.MissingPeer(3, "w", round, all).empty());
        }
        for (int64_t round = last + 1; round < last + 4; ++round) {
          CHECK_TEXT(roster.MissingPeer(3, "w", round, all), LeftText(leaver, last, "w", round));
          // A group round without the leaver does not need it.
          std::vector<int> others;
          for (int r : all) {
            if (r != leaver) others.push_back(r);
          }
          CHECK(roster.MissingPeer(3, "w", round, others).empty());
        }
        // Another stream: its own last round, its own name.
        CHECK(roster.MissingPeer(5, "v.x", last + 2, all).empty());
        CHECK_TEXT(roster.MissingPeer(5, "v.x", last + 3, {leaver, (leaver + 1) % size}),
                   LeftText(leaver, last + 2, "v.x", last + 3));
        // A stream it never joined: round 0 already needs it.
        CHECK_TEXT(roster.MissingPeer(9, "late", 0, all),
                   "rank " + std::to_string(leaver) + " left without join(): its engine shut "
                   "down after never joining stream 'late', and round 0 needs it" + kJoinAdvice);
        CHECK(roster.WhyAbsent(leaver) == "left without join()");
      }
    }
  }
}

// Two ranks left: a round is named after the first departed member it needs, in member
// order, with that member's own last round; a rank that joined and then left is a
// leaver, no longer joined; a lost rank's text beside a leaver's.
void TestTwoLeaversTheFirstMemberNamed() {
  PeerRoster roster;
  roster.MarkJoined(1);
  CHECK(roster.WhyAbsent(1) == "called join()");
  roster.MarkDeparted(1, {{0, 4}});
  roster.MarkDeparted(3, {{0, 7}});
  CHECK(!roster.joined(1));
  CHECK(roster.WhyAbsent(1) == "left without join()");
  CHECK_TEXT(roster.MissingPeer(0, "w", 5, {0, 1, 2, 3}), LeftText(1, 4, "w", 5));
  CHECK_TEXT(roster.MissingPeer(0, "w", 8, {0, 1, 2, 3}), LeftText(1, 4, "w", 8));
  CHECK_TEXT(roster.MissingPeer(0, "w", 8, {2, 3}), LeftText(3, 7, "w", 8));
  CHECK(roster.MissingPeer(0, "w", 7, {2, 3}).empty());  // rank 3 served round 7
  CHECK_TEXT(roster.MissingPeer(0, "w", 6, {0, 1}), LeftText(1, 4, "w", 6));
  roster.MarkLost(2);
  CHECK(roster.WhyAbsent(2) == "was lost");
  CHECK_TEXT(roster.MissingPeer(0, "w", 0, {0, 2}),
             "rank 2 was lost: its connection closed (the process or its host is gone), and "
             "round 0 of stream 'w' needs it");
  CHECK_TEXT(roster.MissingPeer(0, "w", 12, {0, 2, 3}),
             "rank 2 was lost: its connection closed (the process or its host is gone), and "
             "round 12 of stream 'w' needs it");
  // Joined and lost: lost wins.
  roster.MarkJoined(0);
  roster.MarkLost(0);
  CHECK(roster.WhyAbsent(0) == "was lost");
}

// A long name is shortened in the text, with its whole length.
void TestLongNamesAreShortenedWithTheirLength() {
  PeerRoster roster;
  roster.MarkDeparted(2, {{0, 3}});
  const std::string name(200, 'n');
  CHECK_TEXT(roster.MissingPeer(0, name, 4, {1, 2}),
             LeftText(2, 3, std::string(96, 'n') + "...(200 bytes)", 4));
}

// --- stalls ------------------------------------------------------------------------------

void TestRankList() {
  CHECK_TEXT(RankList({}), "[]");
  CHECK_TEXT(RankList({0}), "[0]");
  CHECK_TEXT(RankList({3}), "[3]");
  CHECK_TEXT(RankList({0, 2, 3}), "[0, 2, 3]");
  CHECK_TEXT(RankList({1, 10, 100}), "[1, 10, 100]");
}

void TestStallTimeoutText() {
  CHECK_TEXT(StallTimeoutText(7.04, 7, "w", true, true, 4),
             "stalled: waited 7.0 s (WAGMA_STALL_TIMEOUT_S=7) in global round 4 of stream 'w'");
  CHECK_TEXT(StallTimeoutText(4.36, 4, "s.mid", true, false, 13),
             "stalled: waited 4.4 s (WAGMA_STALL_TIMEOUT_S=4) in group round 13 of stream "
             "'s.mid'");
  CHECK_TEXT(StallTimeoutText(2.55, 2.5, "g", true, false, 0),
             "stalled: waited 2.5 s (WAGMA_STALL_TIMEOUT_S=2.5) in group round 0 of stream 'g'");
  CHECK_TEXT(StallTimeoutText(0.81, 0.75, "x", true, true, 119),
             "stalled: waited 0.8 s (WAGMA_STALL_TIMEOUT_S=0.75) in global round 119 of stream "
             "'x'");
  CHECK_TEXT(StallTimeoutText(123.45, 120, "w", true, true, 1000000),
             "stalled: waited 123.5 s (WAGMA_STALL_TIMEOUT_S=120) in global round 1000000 of "
             "stream 'w'");
  // Round 0 not yet validated: no kind, whatever the plan says.
  for (bool global : {true, false}) {
    CHECK_TEXT(StallTimeoutText(3.0, 3, "late", false, global, 0),
               "stalled: waited 3.0 s (WAGMA_STALL_TIMEOUT_S=3) in round 0 of stream 'late', "
               "for every member to call it");
  }
}

void TestStallNoteText() {
  CHECK_TEXT(StallNoteText(true, {2}, 0), "ranks that have not entered it: [2] (stall report of "
                                          "rank 0)");
  CHECK_TEXT(StallNoteText(true, {0}, 0), "ranks that have not entered it: [0] (stall report of "
                                          "rank 0)");
  CHECK_TEXT(StallNoteText(true, {1, 3}, 0), "ranks that have not entered it: [1, 3] (stall "
                                             "report of rank 0)");
  CHECK_TEXT(StallNoteText(false, {2}, 1), "ranks not waiting in it: [2] (stall report of rank "
                                           "1)");
  CHECK_TEXT(StallNoteText(false, {4, 5, 7}, 3), "ranks not waiting in it: [4, 5, 7] (stall "
                                                 "report of rank 3)");
}

// The inspector: which ranks reported waiting (the warning's "waiting: [...]"; the
// missing ones are the members not among them), per round and stream, each on its
// own clock.
void TestInspectorKeepsEachRoundsWaitingRanks() {
  StallSettings settings;
  settings.warning_s = 1.0;
  settings.report_after_s = 0.25;
  StallInspector inspector(settings);
  const Clock::time_point t0 = Clock::now();
  inspector.OnWaiting(1, 4, 0, t0);
  inspector.OnWaiting(1, 4, 3, t0 + milliseconds(100));
  inspector.OnWaiting(1, 4, 2, t0 + milliseconds(200));
  inspector.OnWaiting(1, 4, 3, t0 + milliseconds(300));  // again: once in the set
  inspector.OnWaiting(2, 4, 1, t0 + milliseconds(400));  // another stream, same round
  inspector.OnWaiting(1, 5, 2, t0 + milliseconds(500));  // another round
  // The first report counts report_after_s of waiting: due at 0.75 s.
  CHECK(inspector.Due(t0 + milliseconds(740)).empty());
  std::vector<StallInspector::Stall> due = inspector.Due(t0 + milliseconds(760));
  CHECK_EQ(due.size(), 1);
  if (due.size() == 1u) {
    CHECK(due[0].stream_id == 1 && due[0].round == 4);
    CHECK((due[0].waiting == std::set<int>{0, 2, 3}));
  }
  due = inspector.Due(t0 + milliseconds(1300));
  CHECK_EQ(due.size(), 2);
  if (due.size() == 2u) {
    CHECK(due[0].stream_id == 1 && due[0].round == 5 && (due[0].waiting == std::set<int>{2}));
    CHECK(due[1].stream_id == 2 && due[1].round == 4 && (due[1].waiting == std::set<int>{1}));
  }
}

// The liveness notes: the ranks that left a probe unanswered, in rank order, and the
// longest silence since a probe; never a peer that answered.
void TestUnresponsiveNoteNamesEverySilentPeer() {
  StallSettings settings;
  settings.probe_after_s = 0.5;
  settings.probe_grace_s = 1.0;
  StallMonitor monitor(settings, 2, 5);
  const Clock::time_point t0 = Clock::now();
  CHECK(monitor.InspectionDue(t0));
  CHECK(monitor.ProbesDue(0.4, false, {0, 1, 3, 4}, t0).empty());  // not waited enough
  CHECK((monitor.ProbesDue(0.6, false, {0, 1, 3, 4}, t0) == std::vector<int>{0, 1, 3, 4}));
  monitor.Heard(1, t0 + milliseconds(20));
  monitor.Heard(3, t0 + milliseconds(30));
  CHECK_TEXT(monitor.UnresponsiveNote({0, 1, 3, 4}, t0 + milliseconds(990)), "");
  CHECK_TEXT(monitor.UnresponsiveNote({0, 1, 3, 4}, t0 + milliseconds(2460)),
             "; ranks not responding: [0, 4] (no answer to a liveness probe for 2.5 s: stopped, "
             "dead or unreachable)");
  // Only the candidates: a peer that departed is not named again.
  CHECK_TEXT(monitor.UnresponsiveNote({1, 3, 4}, t0 + milliseconds(3000)),
             "; ranks not responding: [4] (no answer to a liveness probe for 3.0 s: stopped, "
             "dead or unreachable)");
  // A message clears it.
  monitor.Heard(4, t0 + milliseconds(3100));
  CHECK_TEXT(monitor.UnresponsiveNote({1, 3, 4}, t0 + milliseconds(3200)), "");
  CHECK_TEXT(monitor.UnresponsiveNote({0}, t0 + milliseconds(3200)),
             "; ranks not responding: [0] (no answer to a liveness probe for 3.2 s: stopped, "
             "dead or unreachable)");
  CHECK_TEXT(monitor.LastHeardNote(0, t0 + milliseconds(3200)), " (never heard from)");
  CHECK_TEXT(monitor.LastHeardNote(3, t0 + milliseconds(3200)), " (last heard 3.2 s ago)");
  CHECK_TEXT(monitor.LastHeardNote(4, t0 + milliseconds(14100)), " (last heard 11.0 s ago)");
}

// --- the hold report -------------------------------------------------------------------

// A transport whose requests report a given list of pending messages.
class PendingRequests : public RequestList {
 public:
  explicit PendingRequests(std::vector<PendingMessage> pending) : pending_(std::move(pending)) {}
  void PostReceive(void*, size_t, int, int) override {}
  void PostSend(const void*, size_t, int, int) override {}
  bool Done() override { return pending_.empty(); }
  void Clear() override {}
  void CancelReceives() override {}
  std::vector<PendingMessage> Pending() override { return pending_; }

 private:
  std::vector<PendingMessage> pending_;
};

class PendingTransport : public Transport {
 public:
  std::vector<PendingMessage> next;  // what the next request list reports
  int rank() const override { return 0; }
  int size() const override { return 4; }
  std::unique_ptr<RequestList> NewRequestList() override {
    return std::make_unique<PendingRequests>(next);
  }
  void SendControl(int, int, std::string) override {}
  bool ReceiveControl(int*, int*, std::string*) override { return false; }
  bool FlushControl() override { return true; }
  std::vector<bool> RemoteRanks() override { return {}; }
  void AllreduceMinMax(const int64_t*, int64_t*, int64_t*, int) override {}
  void StartBarrier() override {}
  bool BarrierDone() override { return true; }
  void Close() override {}
};

class IdleReduction : public GroupReduction {
 public:
  using GroupReduction::GroupReduction;
  void Start() override {}
  bool Progress() override { return false; }
  size_t BytesSent() const override { return 0; }
};

std::unique_ptr<GroupReduction> Waiting(std::vector<PendingMessage> pending) {
  static PendingTransport transport;
  transport.next = std::move(pending);
  ReductionArgs args;
  args.transport = &transport;
  return std::make_unique<IdleReduction>(args);
}

Stream MakeStream(const std::string& name) {
  Stream s;
  s.spec.name = name;
  s.id = 0;
  return s;
}

RoundState& AddRound(Stream& s, int64_t round, bool global, std::vector<int> members) {
  RoundState& rs = s.rounds[round];
  rs.round = round;
  rs.plan.global = global;
  if (!global) rs.plan.phase = 0;
  rs.members = std::move(members);
  return rs;
}

const char kEnd[] = ". Each other member prints its view of the round (WAGMA_HOLD_REPORT_S sets "
                    "when).";

void TestJoinViewText() {
  JoinView j;
  CHECK_TEXT(JoinViewText(j), "join() here: not called, ranks heard to have called it: none, "
                              "joins ended: 0");
  j.self_joined = true;
  j.joins_ended = 3;
  CHECK_TEXT(JoinViewText(j), "join() here: called, ranks heard to have called it: none, "
                              "joins ended: 3");
  j.self_joined = false;
  j.known_joined = {0, 2, 3};
  j.joins_ended = 12;
  CHECK_TEXT(JoinViewText(j), "join() here: not called, ranks heard to have called it: "
                              "[0, 2, 3], joins ended: 12");
}

// The waiting rank's report, for the round's kind and number, its members, how it
// joined, what it waits on and the earlier rounds in flight (only earlier, only in
// flight: not the held round itself, nor later rounds, nor completed ones).
void TestHoldReportText() {
  JoinView none;
  {
    Stream s = MakeStream("s");
    RoundState& rs = AddRound(s, 57, false, {0, 1});
    rs.joined = true;
    rs.activated_all = true;
    rs.reduction = Waiting({{1, true}});
    CHECK_TEXT(HoldReportText(0, s, 57, rs, 10.04, none),
               std::string("[horovod_wagma rank 0] hold: the application has waited 10.0 s in "
                           "group round 57 of stream 's' (members [0, 1]; joined by the app, "
                           "activations sent: yes); waits on: receive from rank 1; earlier rounds "
                           "of the stream in flight here: none; join() here: not called, ranks "
                           "heard to have called it: none, joins ended: 0") + kEnd);
  }
  {
    // A middle rank of 4 in a global round, waiting on two members, with earlier rounds
    // in flight and others not.
    Stream s = MakeStream("w.mid");
    AddRound(s, 9, false, {2, 3}).joined = true;                 // in flight, earlier
    RoundState& done = AddRound(s, 10, false, {2, 3});           // completed: not listed
    done.joined = done.completed = true;
    AddRound(s, 12, false, {0, 2}).joined = true;                // in flight, earlier
    AddRound(s, 13, false, {2, 3});                              // not joined: not listed
    AddRound(s, 15, false, {2, 3}).joined = true;                // later: not listed
    RoundState& rs = AddRound(s, 14, true, {0, 1, 2, 3});
    rs.joined = true;
    rs.reduction = Waiting({{0, true}, {3, true}, {3, false}});
    JoinView j;
    j.known_joined = {1};
    j.joins_ended = 2;
    CHECK_TEXT(HoldReportText(2, s, 14, rs, 3.25, j),
               std::string("[horovod_wagma rank 2] hold: the application has waited 3.2 s in "
                           "global round 14 of stream 'w.mid' (members [0, 1, 2, 3]; joined by "
                           "the app, activations sent: no); waits on: receive from rank 0, "
                           "receive from rank 3, send to rank 3; earlier rounds of the stream in "
                           "flight here: [9, 12]; join() here: not called, ranks heard to have "
                           "called it: [1], joins ended: 2") + kEnd);
  }
  {
    // Joined by the engine; nothing pending in its step; then not joined at all.
    Stream s = MakeStream("p");
    RoundState& rs = AddRound(s, 3, false, {1, 3});
    rs.joined = rs.passive = rs.activated_all = true;
    rs.reduction = Waiting({});
    JoinView j;
    j.self_joined = true;
    CHECK_TEXT(HoldReportText(3, s, 3, rs, 1.0, j),
               std::string("[horovod_wagma rank 3] hold: the application has waited 1.0 s in "
                           "group round 3 of stream 'p' (members [1, 3]; joined by the engine, "
                           "activations sent: yes); waits on: nothing pending in its current "
                           "step; earlier rounds of the stream in flight here: none; join() here: "
                           "called, ranks heard to have called it: none, joins ended: 0") + kEnd);
    AddRound(s, 2, false, {1, 3}).joined = true;
    RoundState& waiting = AddRound(s, 4, true, {0, 1, 2, 3});
    CHECK_TEXT(HoldReportText(1, s, 4, waiting, 61.96, none),
               std::string("[horovod_wagma rank 1] hold: the application has waited 62.0 s in "
                           "global round 4 of stream 'p' (members [0, 1, 2, 3]; not joined yet: "
                           "this rank waits for its earlier rounds in flight to complete); waits "
                           "on: no reduction started; earlier rounds of the stream in flight "
                           "here: [2, 3]; join() here: not called, ranks heard to have called "
                           "it: none, joins ended: 0") + kEnd);
  }
}

// Each member's view: the asker, the round, what this engine has of it, what its app
// does and when it last called the stream.
void TestHoldViewText() {
  const Clock::time_point now = Clock::now();
  JoinView none;
  const std::string tail0 = "join() here: not called, ranks heard to have called it: none, "
                            "joins ended: 0";
  auto head = [](int rank, int asker, int64_t round, const std::string& stream) {
    return "[horovod_wagma rank " + std::to_string(rank) + "] hold: rank " +
           std::to_string(asker) + " waits in round " + std::to_string(round) + " of stream '" +
           stream + "'; here: ";
  };
  Stream s = MakeStream("s");
  s.next_app_round = 40;
  s.app_called_at = now - milliseconds(2340);
  // Not started: no activation, the app not there yet.
  CHECK_TEXT(HoldViewText(1, 0, s, 57, now, none),
             head(1, 0, 57, "s") + "not started: no activation has arrived; its app is not in a "
             "call (next round 40), last called the stream 2.3 s ago; " + tail0);
  // Activated, not joined: with the earlier rounds in flight.
  s.activations.insert(57);
  AddRound(s, 55, false, {0, 1}).joined = true;
  AddRound(s, 56, false, {0, 1}).joined = true;
  RoundState& app = AddRound(s, 40, false, {0, 1});  // the app waits in round 40
  app.call.emplace();
  app.joined = true;
  CHECK_TEXT(HoldViewText(1, 0, s, 57, now, none),
             head(1, 0, 57, "s") + "activated, not joined yet (earlier rounds in flight: "
             "[40, 55, 56]); its app waits in round 40, last called the stream 2.3 s ago; " +
             tail0);
  // Collected (before the app's next round), dropped.
  CHECK_TEXT(HoldViewText(1, 3, s, 12, now, none),
             head(1, 3, 12, "s") + "completed and collected; its app waits in round 40, last "
             "called the stream 2.3 s ago; " + tail0);
  s.dropped.insert(70);
  CHECK_TEXT(HoldViewText(1, 2, s, 70, now, none),
             head(1, 2, 70, "s") + "completed and dropped; its app waits in round 40, last "
             "called the stream 2.3 s ago; " + tail0);
  // Rounds held here: completed for the app, joined (by the engine) and waiting on a
  // member, entered by the app and not joined.
  RoundState& held = AddRound(s, 58, false, {0, 1});
  held.joined = held.completed = true;
  CHECK_TEXT(HoldViewText(1, 0, s, 58, now, none),
             head(1, 0, 58, "s") + "completed, held for the app; its app waits in round 40, "
             "last called the stream 2.3 s ago; " + tail0);
  RoundState& passive = AddRound(s, 59, false, {0, 1, 3});
  passive.joined = passive.passive = true;
  passive.reduction = Waiting({{3, true}, {0, false}});
  CHECK_TEXT(HoldViewText(1, 0, s, 59, now, none),
             head(1, 0, 59, "s") + "joined by the engine, in flight, waits on: receive from "
             "rank 3, send to rank 0; its app waits in round 40, last called the stream 2.3 s "
             "ago; " + tail0);
  RoundState& by_app = AddRound(s, 60, false, {0, 1});
  by_app.joined = true;
  CHECK_TEXT(HoldViewText(1, 0, s, 60, now, none),
             head(1, 0, 60, "s") + "joined by the app, in flight, waits on: no reduction; its "
             "app waits in round 40, last called the stream 2.3 s ago; " + tail0);
  AddRound(s, 61, false, {0, 1});
  CHECK_TEXT(HoldViewText(1, 0, s, 61, now, none),
             head(1, 0, 61, "s") + "entered by the app, not joined yet (earlier rounds in "
             "flight: [40, 55, 56, 59, 60]); its app waits in round 40, last called the stream "
             "2.3 s ago; " + tail0);
  // A failed stream says from which round, and why.
  Stream f = MakeStream("f");
  f.next_app_round = 5;
  f.app_called_at = now - milliseconds(50);
  f.error = "shape mismatch";
  f.error_from_round = 4;
  JoinView j;
  j.self_joined = true;
  j.known_joined = {2};
  j.joins_ended = 1;
  CHECK_TEXT(HoldViewText(3, 1, f, 6, now, j),
             head(3, 1, 6, "f") + "not started: no activation has arrived; its app is not in a "
             "call (next round 5), last called the stream 0.1 s ago; join() here: called, ranks "
             "heard to have called it: [2], joins ended: 1; the stream failed here from round "
             "4: shape mismatch");
}

void TestHoldJoinAndLoopPauseTexts() {
  for (int rank : {0, 2, 3}) {
    for (int asker : {0, 1, 3}) {
      if (asker == rank) continue;
      Stream s = MakeStream("lost");
      CHECK_TEXT(HoldJoinText(rank, asker, s, 24),
                 "[horovod_wagma rank " + std::to_string(rank) + "] hold: this rank called "
                 "join() and serves every round, but round 24 of stream 'lost' had not started "
                 "here and no activation for it had arrived; rank " + std::to_string(asker) +
                 " waits in it: joining it now");
    }
  }
  const std::string how = "; of those 12.3 s the thread ran 0.1 s on a CPU, waited 12.1 s "
                          "runnable and slept 0.1 s: starved (runnable, not scheduled)";
  CHECK_TEXT(HoldLoopPauseText(2, 12.34, how),
             "[horovod_wagma rank 2] hold: this engine's loop did not run for 12.3 s (the "
             "thread was blocked or not scheduled): every round it serves waited that long" +
             how);
  CHECK_TEXT(HoldLoopPauseText(0, 2.0, ""),
             "[horovod_wagma rank 0] hold: this engine's loop did not run for 2.0 s (the "
             "thread was blocked or not scheduled): every round it serves waited that long");
}

// SchedGapText's numbers: the gap, the time on a CPU, runnable and the rest asleep,
// each to a tenth, and the largest part's verdict.
void TestSchedGapNumbers() {
  SchedTimes before{true, 10.0, 5.0};
  CHECK_TEXT(SchedGapText(before, SchedTimes{true, 10.1, 17.1}, 12.3),
             "; of those 12.3 s the thread ran 0.1 s on a CPU, waited 12.1 s runnable and "
             "slept 0.1 s: starved (runnable, not scheduled)");
  CHECK_TEXT(SchedGapText(before, SchedTimes{true, 13.0, 5.5}, 4.0),
             "; of those 4.0 s the thread ran 3.0 s on a CPU, waited 0.5 s runnable and slept "
             "0.5 s: busy (running inside a call that did not return)");
  CHECK_TEXT(SchedGapText(before, SchedTimes{true, 10.05, 5.0}, 2.0),
             "; of those 2.0 s the thread ran 0.1 s on a CPU, waited 0.0 s runnable and slept "
             "1.9 s: asleep (blocked on a lock or a wait, or stopped)");
}

// --- counters ----------------------------------------------------------------------------

// hold_reports, loop_pauses and joins_on_hold_query are the engine's, over every
// stream, and only grow (a later snapshot holds the earlier counts); `errors` is per
// stream.
void TestReportCountersAreEngineWideAndCumulative() {
  EngineMetrics m;
  m.HoldReport("a", 1);
  m.HoldReport("a", 3);
  m.HoldReport("b", 3);
  EngineStats e = m.Snapshot();
  CHECK_EQ(e.hold_reports, 3);
  CHECK_EQ(e.loop_pauses, 0);
  CHECK_EQ(e.joins_on_hold_query, 0);
  m.LoopPause(1.5);
  m.LoopPause(0.2);
  m.JoinOnHoldQuery("a", 4);
  m.JoinOnHoldQuery("c", 0);
  m.HoldReport("c", 9);
  e = m.Snapshot();
  CHECK_EQ(e.hold_reports, 4);
  CHECK_EQ(e.loop_pauses, 2);
  CHECK_EQ(e.joins_on_hold_query, 2);
  CHECK(Contains(m.Json(e), "\"hold_reports\":4,\"loop_pauses\":2,\"joins_on_hold_query\":2}"));
  // No stream carries them.
  const std::string json = m.Json(e);
  const std::string streams = json.substr(json.find("\"streams\""));
  CHECK(!Contains(streams, "hold_reports"));
  m.RoundFailed("a", 5, "x");
  m.RoundFailed("b", 5, "x");
  m.RoundFailed("a", 6, "x");
  const std::string after = m.Json(m.Snapshot());
  const size_t a = after.find("\"a\":{"), b = after.find("\"b\":{");
  CHECK(a != std::string::npos && b != std::string::npos);
  if (a == std::string::npos || b == std::string::npos) return;
  CHECK(Contains(after.substr(a, after.find('}', a) - a), "\"errors\":2"));
  CHECK(Contains(after.substr(b, after.find('}', b) - b), "\"errors\":1"));
  // A hold report alone does not list a stream in stats().
  CHECK(!Contains(after, "\"c\":{"));
}

}  // namespace

int main() {
  TestEveryLeaverAndRoundIsNamed();
  TestTwoLeaversTheFirstMemberNamed();
  TestLongNamesAreShortenedWithTheirLength();
  TestRankList();
  TestStallTimeoutText();
  TestStallNoteText();
  TestInspectorKeepsEachRoundsWaitingRanks();
  TestUnresponsiveNoteNamesEverySilentPeer();
  TestJoinViewText();
  TestHoldReportText();
  TestHoldViewText();
  TestHoldJoinAndLoopPauseTexts();
  TestSchedGapNumbers();
  TestReportCountersAreEngineWideAndCumulative();
  return Report("report_text_test");
}
