#pragma once
// What the bindings on the core's test double share (memory, relayed): the world, its clock,
// running it, and taking its peers down. Each binding says which environments the suite sees.
#include <functional>

#include "conformance/binding.h"
#include "support/memory_world.h"

namespace swarmlab::conformance {

class MemoryWorldBinding : public TestBinding {
 public:
  // A world of `peers` (which may be more than the suite sees), each with the options' link.
  MemoryWorldBinding(std::size_t peers, const BindingOptions& o)
      : world_(peers, core::testing::PeerSpec{o.latency, o.link_bps, o.compute_sps}, o.seed) {}

  Seconds now() const override { return world_.now(); }
  bool run_until(const std::function<bool()>& done, Seconds deadline) override {
    while (!done()) {
      if (world_.now() >= deadline || !world_.step()) {
        if (world_.now() < deadline) world_.run_until(deadline);
        return done();
      }
    }
    return true;
  }
  void crash(PeerId p) override { world_.set_down(p, core::testing::MemoryWorld::Departure::Crash); }
  void vanish(PeerId p) override { world_.set_down(p, core::testing::MemoryWorld::Departure::Silent); }

 protected:
  core::testing::MemoryWorld world_;
};

}  // namespace swarmlab::conformance
