// GraceWindow: how long this rank's engine may hold back a passive join, so that an
// app about to enter the round contributes its fresh value instead of a stale one
// (docs/design.md, section 2.4a: the bounded grace window).
//
// Why: with ranks at equal speed, a peer's activation often arrives a few
// milliseconds before this rank's app calls the same round (host jitter). Joining at
// once puts last step's model into the mean: 22-30% of rounds were served that way
// with no straggler at all (P=8, 40 ms steps), and those runs learnt less per step
// than exact averaging. Waiting a little for the app turns those rounds fresh.
//
// The rule, per stream, on this rank only (peers need not agree):
//   - lag: for each activation of the round the app calls next, the time from its
//     arrival until the app entered that round (or a later one). Measured whether or
//     not the engine waited, so waiting does not bias what it learns.
//   - step: the mean time between the app's calls (exponential, weight 1/5).
//   - cap = cap_fraction * step. Lags above the cap are ones no window could catch.
//   - window = 0 until `kMinLags` lags are known, or while fewer than 7 in 8 of the
//     last `kHistory` lags are within the cap: a persistent straggler, or a rank
//     often far late (random noise), would make its peers wait out the whole window
//     each time it misses. (Half, the first rule, cost 21% of the samples/s with 2 of
//     8 ranks 160 ms late at every 40 ms step: every group of 8 had a member whose
//     window ran out.) Else twice the longest lag within the cap plus
//     `kMarginUs`, and never above the cap. Twice: lags on a busy host have a tail
//     (a 4 ms delay arrived 4-6 ms late on 4 ranks here), and a window that the app
//     beats costs its peers only the app's actual lag.
// Invariants: the window never exceeds cap_fraction of a step, and it holds back only
// the round the app calls next; the engine then joins with what it has. Nobody ever
// waits longer than that, so no wait can chain into a deadlock (a rank whose app sits
// in a Horovod collective costs its peers one window per round, no more).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>

namespace wagma {

class GraceWindow {
 public:
  using Clock = std::chrono::steady_clock;
  // 32: with 16, a rank far late one step in four still showed 7 in 8 catchable lags
  // about one time in eight by chance (binomial), enough to keep some member of
  // every group of 8 waiting out its window (11% of the samples/s, random noise).
  static constexpr int kHistory = 32;
  static constexpr int kMinLags = 4;
  static constexpr int64_t kMarginUs = 1000;  // the loop's own latency (its sleeps)

  explicit GraceWindow(double cap_fraction = 0) : cap_fraction_(cap_fraction) {}
  void set_cap_fraction(double f) { cap_fraction_ = f; }

  // The app called the stream at `now` and entered round `round` (or was served by
  // it, skipping): closes an open lag measurement and updates the step time.
  void AppEntered(int64_t round, Clock::time_point now);
  // A peer's activation of `round` arrived at `at` while `round` is the one the app
  // calls next and has not called yet. Only the first arrival of a round counts.
  void Activated(int64_t round, Clock::time_point at);
  // Until when a passive join of `round` may be held back: `at` of its activation plus
  // the window; no hold (an epoch) when the window is 0 or `round` is not the one
  // awaited.
  Clock::time_point HoldUntil(int64_t round) const;

  int64_t window_us() const;
  int64_t step_us() const { return static_cast<int64_t>(step_us_); }

 private:
  double cap_fraction_;
  double step_us_ = 0;  // 0: fewer than two calls seen
  Clock::time_point last_call_{};
  bool called_ = false;
  int64_t awaited_round_ = -1;  // activated before the app came; -1: none
  Clock::time_point awaited_at_{};
  std::deque<int64_t> lags_us_;
};

}  // namespace wagma
