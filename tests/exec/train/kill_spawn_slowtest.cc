// Kill/spawn stress, ten minutes with the CNN (tests/exec/train/kill_spawn.h).
#include "kill_spawn.h"

namespace swarmlab::exec {
namespace {

TEST(KillSpawnSlow, TenMinutesOfRandomKillsAndStartsLeaveOneStateAndBalancedBooks) {
  testing::run_kill_spawn_stress(600, "cnn", 7);
}

}  // namespace
}  // namespace swarmlab::exec
