#include "rounds/grace_window.h"

#include <algorithm>

namespace wagma {

void GraceWindow::AppEntered(int64_t round, Clock::time_point now) {
  if (called_) {
    const double interval_us =
        std::chrono::duration<double, std::micro>(now - last_call_).count();
    step_us_ = step_us_ == 0 ? interval_us : 0.8 * step_us_ + 0.2 * interval_us;
  }
  called_ = true;
  last_call_ = now;
  if (awaited_round_ >= 0 && round >= awaited_round_) {
    lags_us_.push_back(
        std::chrono::duration_cast<std::chrono::microseconds>(now - awaited_at_).count());
    if (static_cast<int>(lags_us_.size()) > kHistory) lags_us_.pop_front();
    awaited_round_ = -1;
  }
}

void GraceWindow::Activated(int64_t round, Clock::time_point at) {
  if (round == awaited_round_) return;
  awaited_round_ = round;
  awaited_at_ = at;
}

int64_t GraceWindow::window_us() const {
  if (cap_fraction_ <= 0 || step_us_ <= 0 || static_cast<int>(lags_us_.size()) < kMinLags)
    return 0;
  const int64_t cap = static_cast<int64_t>(cap_fraction_ * step_us_);
  int within = 0;
  int64_t longest = 0;
  for (int64_t lag : lags_us_) {
    if (lag > cap) continue;
    ++within;
    longest = std::max(longest, lag);
  }
  // Seven in eight: in a group of g members, every late arrival past the window costs
  // all the others the whole window, so it must be rare (see grace_window.h).
  if (8 * within < 7 * static_cast<int>(lags_us_.size())) return 0;
  return std::min(cap, 2 * longest + kMarginUs);
}

GraceWindow::Clock::time_point GraceWindow::HoldUntil(int64_t round) const {
  if (round != awaited_round_) return Clock::time_point{};
  const int64_t w = window_us();
  if (w <= 0) return Clock::time_point{};
  return awaited_at_ + std::chrono::microseconds(w);
}

}  // namespace wagma
