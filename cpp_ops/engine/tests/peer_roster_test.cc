// Unit test of PeerRoster::MissingPeer (peer_roster.h), the early-exit rule of
// docs/faults.md: a rank whose engine shut down without join() told its peers the last
// round of each stream it joined. Those rounds still complete; the next round that
// needs it fails, naming it, its last round and the round ("rank 3 left without
// join(): its engine shut down after round 6 of stream 'w', and round 7 needs it").
// A rank lost without a goodbye fails every round that needs it.
// Built and run by `make engine-unit-test` (and `make test`).
#include <string>

#include "check.h"
#include "transport/peer_roster.h"

namespace {

using wagma::PeerRoster;

void TestTheLastRoundServedCompletesTheNextFails() {
  PeerRoster roster;
  roster.MarkDeparted(3, {{1, 6}});
  CHECK(roster.MissingPeer(1, "w", 5, {2, 3}).empty());
  CHECK(roster.MissingPeer(1, "w", 6, {2, 3}).empty());  // it joined round 6
  const std::string next = roster.MissingPeer(1, "w", 7, {2, 3});
  CHECK(Contains(next, "rank 3 left without join(): its engine shut down after round 6 of "
                       "stream 'w', and round 7 needs it"));
  CHECK(Contains(next, "(a rank that runs out of data must call join())"));
  // A round without it, or a stream it never joined.
  CHECK(roster.MissingPeer(1, "w", 9, {0, 1}).empty());
  CHECK(Contains(roster.MissingPeer(2, "v", 0, {0, 3}),
                 "rank 3 left without join(): its engine shut down after never joining "
                 "stream 'v', and round 0 needs it"));
  CHECK(roster.WhyAbsent(3) == "left without join()");
}

void TestALostRankFailsEveryRoundThatNeedsIt() {
  PeerRoster roster;
  roster.MarkLost(2);
  CHECK(Contains(roster.MissingPeer(1, "w", 0, {1, 2}),
                 "rank 2 was lost: its connection closed"));
  CHECK(Contains(roster.MissingPeer(1, "w", 0, {1, 2}), "round 0 of stream 'w' needs it"));
  CHECK(roster.WhyAbsent(2) == "was lost");
}

}  // namespace

int main() {
  TestTheLastRoundServedCompletesTheNextFails();
  TestALostRankFailsEveryRoundThatNeedsIt();
  return Report("peer_roster_test");
}
