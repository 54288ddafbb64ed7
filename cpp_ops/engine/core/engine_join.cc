// Engine, part 4: join(), for uneven data. A rank out of data calls join(); its engine
// serves every later round with its final model until every rank has joined, then
// join() returns on every rank with the last rank to join (docs/faults.md, "join()").
#include <algorithm>
#include <string>

#include "core/engine.h"

namespace wagma {

void Engine::StartJoin() {
  if (joins_.self_joined()) return;
  joins_.MarkSelfJoined();
  // Rounds completed passively and held for the app: it will not collect them now.
  std::map<int, int64_t> last_round;
  for (auto& kv : streams_.all()) {
    Stream& s = kv.second;
    for (auto it = s.rounds.begin(); it != s.rounds.end();) {
      if (!it->second.call && it->second.completed) {
        s.dropped.insert(it->first);
        it = s.rounds.erase(it);
      } else {
        ++it;
      }
    }
    if (s.id >= 0) last_round[s.id] = s.next_app_round - 1;
  }
  const std::string payload = PackLastRounds(last_round);
  const int64_t generation = joins_.generation();
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) SendControl(r, ControlKind::kJoined, -1, generation, payload);
  }
  OnJoined(rank_, generation, payload);
  // The registrar left before this join: nobody else can end it.
  if (rank_ != kRegistrar && roster_.departed(kRegistrar) && joins_.self_joined())
    OnAllJoined(-(kRegistrar + 1), "");
}

void Engine::OnJoined(int source, int64_t generation, const std::string& payload) {
  switch (joins_.Classify(generation)) {
    case JoinCoordinator::Notice::kStale:
      return;  // "all joined" overtook it: that join is over here
    case JoinCoordinator::Notice::kEarly:
      joins_.Defer(source, payload);  // the next join; this one has not ended here yet
      return;
    case JoinCoordinator::Notice::kCurrent:
      break;
  }
  if (source != rank_) {
    roster_.MarkJoined(source);
    // Rounds this rank is in that activated nobody (global rounds, rounds without
    // wait-avoidance): the joined rank joins only when activated.
    for (auto& kv : streams_.all()) {
      Stream& s = kv.second;
      for (const auto& r : s.rounds) {
        const RoundState& rs = r.second;
        if (!rs.in_flight() || rs.activated_all ||
            std::find(rs.members.begin(), rs.members.end(), source) == rs.members.end())
          continue;
        if (LoseActivationForTest()) continue;
        SendControl(source, ControlKind::kActivate, s.id, r.first, PackFingerprint(s.fingerprint));
      }
    }
  }
  if (rank_ != kRegistrar) return;
  const bool all_joined = joins_.Record(source, UnpackLastRounds(payload), size_);
  RejectUnreachableRegistrations();
  // A rank that left before this join began never joins it (its goodbye came first).
  if (roster_.first_departed() >= 0) {
    EndJoinWithoutLeaver(roster_.first_departed());
    return;
  }
  if (!all_joined) return;
  const int last_rank = joins_.last_rank();
  const std::string rounds = PackLastRounds(joins_.last_rounds());
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) SendControl(r, ControlKind::kAllJoined, last_rank, 0, rounds);
  }
  OnAllJoined(last_rank, rounds);
}

void Engine::OnAllJoined(int last_rank, const std::string& payload) {
  roster_.ClearJoined();
  joins_.Reset();
  // Everyone continues from the furthest round any app reached, so that the ranks'
  // round numbers agree again if training goes on after join().
  for (const auto& kv : UnpackLastRounds(payload)) {
    Stream* found = streams_.FindById(kv.first);
    if (!found) continue;
    Stream& s = *found;
    s.next_app_round = std::max(s.next_app_round, kv.second + 1);
    s.last_app_round = std::max(s.last_app_round, s.next_app_round - 1);
    for (auto r = s.rounds.begin(); r != s.rounds.end();) {
      if (!r->second.call && r->first < s.next_app_round && !r->second.in_flight()) {
        r = s.rounds.erase(r);
      } else {
        ++r;
      }
    }
  }
  if (last_rank >= 0) {
    join_slot_.Finish(last_rank, "");
  } else {
    join_slot_.Finish(-1, "rank " + std::to_string(-last_rank - 1) +
                              " left without join() while other ranks were joining");
  }
  // Ranks already in the next join: now they count as joined here.
  for (const auto& early : joins_.TakeEarly()) {
    OnJoined(early.first, joins_.generation(), early.second);
  }
}

JoinView Engine::CurrentJoinView() const {
  JoinView j;
  j.self_joined = joins_.self_joined();
  j.known_joined = roster_.joined_ranks();
  j.joins_ended = joins_.generation();
  return j;
}

}  // namespace wagma
