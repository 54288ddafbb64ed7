#include "core/progress_pacer.h"

#include <algorithm>

namespace wagma {

ProgressPacer::Pause ProgressPacer::AfterPass(bool progressed, bool busy,
                                              Clock::time_point now) {
  Pause pause;
  if (progressed) {
    last_progress_ = now;
    return pause;
  }
  const int64_t idle_us =
      std::chrono::duration_cast<std::chrono::microseconds>(now - last_progress_).count();
  const int64_t spin_us = settings_.spin_us;
  if (idle_us < (busy ? 25 * spin_us : spin_us)) {
    pause.kind = Pause::Kind::kYield;
    return pause;
  }
  const int64_t idle_cap = idle_us > 2000000 ? std::max<int64_t>(4000, settings_.idle_sleep_us)
                                             : settings_.idle_sleep_us;
  const int64_t cap_us = busy ? 200 : idle_cap;
  pause.kind = Pause::Kind::kSleep;
  pause.sleep_us = std::max<int64_t>(20, std::min<int64_t>(cap_us, idle_us / 4));
  return pause;
}

}  // namespace wagma
