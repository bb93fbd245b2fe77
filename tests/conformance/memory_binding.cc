// The core's test double (tests/core/support/memory_world.h), so that what the core's own tests
// rely on is what the real bindings do.
#include <memory>

#include "bindings.h"
#include "memory_world_binding.h"

namespace swarmlab::conformance {
namespace {

class MemoryBinding final : public MemoryWorldBinding {
 public:
  explicit MemoryBinding(const BindingOptions& o) : MemoryWorldBinding(o.peers, o) {}
  std::size_t size() const override { return world_.size(); }
  core::Environment& env(PeerId p) override { return world_.env(p); }
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
