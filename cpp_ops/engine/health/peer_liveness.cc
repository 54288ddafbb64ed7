#include "health/peer_liveness.h"

namespace wagma {
namespace {

double Seconds(PeerLiveness::Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

PeerLiveness::PeerLiveness(int rank, int size) : rank_(rank), peers_(size) {}

void PeerLiveness::Heard(int peer, Clock::time_point now) {
  if (peer < 0 || peer >= static_cast<int>(peers_.size())) return;
  peers_[peer].heard = now;
  peers_[peer].unanswered = Clock::time_point{};
}

std::vector<int> PeerLiveness::ProbeDue(const std::vector<int>& candidates,
                                        Clock::time_point now, double interval_s) {
  std::vector<int> due;
  for (int r : candidates) {
    if (r == rank_ || r < 0 || r >= static_cast<int>(peers_.size())) continue;
    Peer& p = peers_[r];
    const bool probed_lately = p.probed != Clock::time_point{} && Seconds(now - p.probed) < interval_s;
    const bool heard_lately = p.heard != Clock::time_point{} && Seconds(now - p.heard) < interval_s;
    if (probed_lately || heard_lately) continue;
    p.probed = now;
    if (p.unanswered == Clock::time_point{}) p.unanswered = now;
    due.push_back(r);
  }
  return due;
}

double PeerLiveness::SinceHeard(int peer, Clock::time_point now) const {
  if (peer < 0 || peer >= static_cast<int>(peers_.size())) return -1;
  const Peer& p = peers_[peer];
  return p.heard == Clock::time_point{} ? -1 : Seconds(now - p.heard);
}

void PeerLiveness::Discount(Clock::duration gap) {
  for (Peer& p : peers_) {
    if (p.unanswered != Clock::time_point{}) p.unanswered += gap;
  }
}

std::vector<int> PeerLiveness::Unresponsive(const std::vector<int>& candidates,
                                            Clock::time_point now, double grace_s,
                                            double* silent_s) const {
  std::vector<int> out;
  double longest = 0;
  for (int r : candidates) {
    if (r == rank_ || r < 0 || r >= static_cast<int>(peers_.size())) continue;
    const Peer& p = peers_[r];
    if (p.unanswered == Clock::time_point{}) continue;
    const double silent = Seconds(now - p.unanswered);
    if (silent < grace_s) continue;
    out.push_back(r);
    if (silent > longest) longest = silent;
  }
  if (silent_s) *silent_s = longest;
  return out;
}

}  // namespace wagma
