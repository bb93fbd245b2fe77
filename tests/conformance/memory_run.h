#pragma once
// Running the core's test double as a conformance binding runs it (memory and relayed bindings).
#include <functional>

#include "support/memory_world.h"

namespace swarmlab::conformance {

// Runs `world` until `done()` holds (checked after every event) or its clock reaches `deadline`;
// returns done().
inline bool run_memory_world(core::testing::MemoryWorld& world, const std::function<bool()>& done, core::Seconds deadline) {
  while (!done()) {
    if (world.now() >= deadline || !world.step()) {
      if (world.now() < deadline) world.run_until(deadline);
      return done();
    }
  }
  return true;
}

}  // namespace swarmlab::conformance
