#pragma once
// What a training peer knows about itself and tells its coordinator (core/training/coordinator.h)
// whenever it changes.
#include <cstdint>

namespace swarmlab::core::progress {

// What the peer is doing. A coordinator that forms groups with a global view (the simulator's
// oracle) waits for peers that will look for a group soon, and not for those loading state.
enum class Activity { Joining, Syncing, Training };

struct LocalProgress {
  std::uint64_t step = 0;       // optimizer steps taken
  std::uint64_t samples = 0;    // samples accumulated towards the next step
  double samples_per_s = 0;     // recent throughput (0 while not computing)
  Activity activity = Activity::Training;
  std::uint64_t lineage = 0;    // names the state held at `step` (core/training/state_lineage.h)
};

}  // namespace swarmlab::core::progress
