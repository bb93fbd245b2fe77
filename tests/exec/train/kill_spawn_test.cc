// Kill/spawn stress, the default suite's minute (tests/exec/train/kill_spawn.h).
#include "kill_spawn.h"

namespace swarmlab::exec {
namespace {

TEST(KillSpawn, AMinuteOfRandomKillsAndStartsLeavesOneStateAndBalancedBooks) {
  testing::run_kill_spawn_stress(60, "linear", 1);
}

}  // namespace
}  // namespace swarmlab::exec
