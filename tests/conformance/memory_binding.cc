// The core's test double (tests/core/support/memory_world.h), so that what the core's own tests
// rely on is what the real bindings do.
#include <memory>

#include "bindings.h"
#include "memory_run.h"
#include "support/memory_world.h"

namespace swarmlab::conformance {
namespace {

class MemoryBinding final : public TestBinding {
 public:
  explicit MemoryBinding(const BindingOptions& o)
      : world_(o.peers, core::testing::PeerSpec{o.latency, o.link_bps, o.compute_sps}, o.seed) {}
  std::size_t size() const override { return world_.size(); }
  core::Environment& env(PeerId p) override { return world_.env(p); }
  Seconds now() const override { return world_.now(); }
  bool run_until(const std::function<bool()>& done, Seconds deadline) override {
    return run_memory_world(world_, done, deadline);
  }
  void crash(PeerId p) override { world_.set_down(p, core::testing::MemoryWorld::Departure::Crash); }
  void vanish(PeerId p) override { world_.set_down(p, core::testing::MemoryWorld::Departure::Silent); }

 private:
  core::testing::MemoryWorld world_;
};

class MemoryFactory final : public BindingFactory {
 public:
  std::string name() const override { return "memory"; }
  Traits traits() const override { return {true, 0, 1e-9}; }
  std::unique_ptr<TestBinding> make(const BindingOptions& o) const override { return std::make_unique<MemoryBinding>(o); }
};

}  // namespace

std::unique_ptr<BindingFactory> memory_binding() { return std::make_unique<MemoryFactory>(); }

}  // namespace swarmlab::conformance
