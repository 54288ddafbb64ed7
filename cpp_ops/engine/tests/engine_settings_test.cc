// EngineSettings::FromEnv: the engine thread's spin follows the transport (it spins
// only where polling moves the bytes), and HOROVOD_WAGMA_SPIN_US overrides it on both.
#include <cstdlib>

#include "check.h"
#include "engine_settings.h"

using wagma::EngineSettings;

int main() {
  unsetenv("HOROVOD_WAGMA_SPIN_US");
  CHECK_EQ(EngineSettings::FromEnv(/*transport_progresses_on_its_own=*/false).pacer.spin_us, 200);
  CHECK_EQ(EngineSettings::FromEnv(/*transport_progresses_on_its_own=*/true).pacer.spin_us, 0);
  setenv("HOROVOD_WAGMA_SPIN_US", "50", 1);
  CHECK_EQ(EngineSettings::FromEnv(false).pacer.spin_us, 50);
  CHECK_EQ(EngineSettings::FromEnv(true).pacer.spin_us, 50);
  unsetenv("HOROVOD_WAGMA_SPIN_US");
  // The rest of the pacer does not depend on the transport.
  CHECK_EQ(EngineSettings::FromEnv(true).pacer.idle_sleep_us,
           EngineSettings::FromEnv(false).pacer.idle_sleep_us);
  return Report("engine_settings_test");
}
