#include "health/hold_report.h"

#include <cstdio>

#include "health/stall_monitor.h"
#include "core/stream_spec.h"

namespace wagma {

namespace {

std::string Head(int rank) { return "[horovod_wagma rank " + std::to_string(rank) + "] hold: "; }

std::string RoundName(const Stream& s, int64_t round, const RoundState* rs) {
  const bool global = rs ? rs->plan.global : false;
  return std::string(rs ? (global ? "global" : "group") : "") + (rs ? " " : "") + "round " +
         std::to_string(round) + " of stream '" + NameForMessage(s.spec.name) + "'";
}

std::string Pending(const std::vector<PendingMessage>& pending) {
  if (pending.empty()) return "nothing pending in its current step";
  std::string out;
  for (const PendingMessage& m : pending) {
    out += (out.empty() ? "" : ", ") +
           std::string(m.receive ? "receive from rank " : "send to rank ") +
           std::to_string(m.peer);
  }
  return out;
}

std::string EarlierInFlight(const Stream& s, int64_t round) {
  std::vector<int> earlier;
  for (const auto& r : s.rounds) {
    if (r.first < round && r.second.in_flight()) earlier.push_back(static_cast<int>(r.first));
  }
  return earlier.empty() ? "none" : RankList(earlier);
}

std::string Seconds(double s, int decimals = 1) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f s", decimals, s);
  return text;
}

}  // namespace

std::string JoinViewText(const JoinView& j) {
  return std::string("join() here: ") + (j.self_joined ? "called" : "not called") +
         ", ranks heard to have called it: " +
         (j.known_joined.empty() ? "none" : RankList(j.known_joined)) +
         ", joins ended: " + std::to_string(j.joins_ended);
}

std::string HoldJoinText(int rank, int asker, const Stream& s, int64_t round) {
  return Head(rank) + "this rank called join() and serves every round, but round " +
         std::to_string(round) + " of stream '" + NameForMessage(s.spec.name) +
         "' had not started here and no activation for it had arrived; rank " +
         std::to_string(asker) + " waits in it: joining it now";
}

std::string HoldReportText(int rank, Stream& s, int64_t round, RoundState& rs,
                           double waited_s, const JoinView& joins) {
  std::string text = Head(rank) + "the application has waited " + Seconds(waited_s) + " in " +
                     RoundName(s, round, &rs) + " (members " + RankList(rs.members) + "; ";
  if (!rs.joined) {
    text += "not joined yet: this rank waits for its earlier rounds in flight to complete";
  } else {
    text += std::string(rs.passive ? "joined by the engine" : "joined by the app") +
            ", activations sent: " + (rs.activated_all ? "yes" : "no");
  }
  text += "); waits on: ";
  text += rs.reduction ? Pending(rs.reduction->PendingMessages()) : "no reduction started";
  text += "; earlier rounds of the stream in flight here: " + EarlierInFlight(s, round);
  text += "; " + JoinViewText(joins);
  text += ". Each other member prints its view of the round (WAGMA_HOLD_REPORT_S sets when).";
  return text;
}

std::string HoldViewText(int rank, int asker, Stream& s, int64_t round,
                         std::chrono::steady_clock::time_point now, const JoinView& joins) {
  std::string text = Head(rank) + "rank " + std::to_string(asker) + " waits in " +
                     RoundName(s, round, nullptr) + "; here: ";
  auto found = s.rounds.find(round);
  if (found == s.rounds.end()) {
    if (s.dropped.count(round)) {
      text += "completed and dropped";
    } else if (s.activations.count(round)) {
      text += "activated, not joined yet (earlier rounds in flight: " +
              EarlierInFlight(s, round) + ")";
    } else if (round < s.next_app_round) {
      text += "completed and collected";
    } else {
      text += "not started: no activation has arrived";
    }
  } else {
    RoundState& rs = found->second;
    if (rs.completed) {
      text += "completed, held for the app";
    } else if (rs.joined) {
      text += std::string(rs.passive ? "joined by the engine" : "joined by the app") +
              ", in flight, waits on: " +
              (rs.reduction ? Pending(rs.reduction->PendingMessages()) : "no reduction");
    } else {
      text += "entered by the app, not joined yet (earlier rounds in flight: " +
              EarlierInFlight(s, round) + ")";
    }
  }
  bool app_in_call = false;
  int64_t app_round = -1;
  for (const auto& r : s.rounds) {
    if (r.second.call && !r.second.completed) {
      app_in_call = true;
      app_round = r.first;
    }
  }
  const double since_call =
      std::chrono::duration<double>(now - s.app_called_at).count();
  text += "; its app " + (app_in_call ? "waits in round " + std::to_string(app_round)
                                      : "is not in a call (next round " +
                                            std::to_string(s.next_app_round) + ")") +
          ", last called the stream " + Seconds(since_call) + " ago; " + JoinViewText(joins);
  // A failed stream ignores activations from error_from_round on (Engine::OnActivate).
  if (!s.error.empty()) {
    text += "; the stream failed here from round " + std::to_string(s.error_from_round) +
            ": " + s.error;
  }
  return text;
}

std::string HoldLoopPauseText(int rank, double paused_s, const std::string& how) {
  return Head(rank) + "this engine's loop did not run for " + Seconds(paused_s) +
         " (the thread was blocked or not scheduled): every round it serves waited that "
         "long" + how;
}

std::string HoldPollText(int rank, double spent_s, const PollTally& tally) {
  std::string kinds;
  for (size_t k = 0; k < tally.by_kind.size(); ++k) {
    if (tally.by_kind[k]) {
      kinds += (kinds.empty() ? "" : ", ") + std::to_string(tally.by_kind[k]) + " of kind " +
               std::to_string(k);
    }
  }
  return Head(rank) + "polling control messages took " + Seconds(spent_s) + ": " +
         std::to_string(tally.messages) + " message(s)" +
         (kinds.empty() ? "" : " (" + kinds + ")") + ", the longest receive " +
         Seconds(tally.longest_receive_s, 3) + ", the longest handling " +
         Seconds(tally.longest_handling_s, 3) + " (kinds: control_messages.h)";
}

std::string HoldLoopPartText(int rank, const char* part, double seconds) {
  return Head(rank) + "one pass of this engine's loop spent " + Seconds(seconds) + " " +
         part + " (a transport call or a lock that blocked)";
}

}  // namespace wagma
