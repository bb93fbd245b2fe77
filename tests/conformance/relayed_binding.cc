// Every pair relayed (docs/trust.md §4): the peers sit behind symmetric NATs and reach each other
// only through a relay the suite does not see, on the core's test double. The relay layer must
// keep every promise of the seam: order, failures, pacing.
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.h"
#include "core/forwarding_environment.h"
#include "core/relay/relayed_environment.h"
#include "memory_world_binding.h"

namespace swarmlab::conformance {
namespace {

// The suite's view of a peer: the relay is not a peer of its collaboration, so sending to it is
// sending outside the collaboration.
class VisiblePeers final : public core::ForwardingEnvironment {
 public:
  VisiblePeers(core::Environment& relayed, std::size_t visible) : ForwardingEnvironment(relayed), visible_(visible) {}
  void send(PeerId to, core::Message m) override {
    if (to >= visible_) throw std::out_of_range("send: peer " + std::to_string(to) + " is not in the collaboration");
    inner_.send(to, std::move(m));
  }
  void set_pacing(PeerId to, double bps) override {
    if (to >= visible_) throw std::out_of_range("set_pacing: peer " + std::to_string(to) + " is not in the collaboration");
    inner_.set_pacing(to, bps);
  }
  void set_sink(core::Service* sink) override { inner_.set_sink(sink); }

 private:
  std::size_t visible_;
};

class RelayedBinding final : public MemoryWorldBinding {
 public:
  explicit RelayedBinding(const BindingOptions& o) : MemoryWorldBinding(o.peers + 1, o) {
    const auto relay = static_cast<PeerId>(o.peers);  // the last peer, which the suite never sees
    core::relay::ReachabilityConfig c;
    c.nat.assign(o.peers, core::relay::Nat::Symmetric);
    c.nat.push_back(core::relay::Nat::None);
    c.relays = {{relay, o.link_bps, o.link_bps}};
    reach_ = std::make_unique<core::relay::Reachability>(c);
    for (PeerId p = 0; p <= relay; ++p) envs_.push_back(std::make_unique<core::relay::RelayedEnvironment>(world_.env(p), *reach_));
    for (PeerId p = 0; p < relay; ++p) views_.push_back(std::make_unique<VisiblePeers>(*envs_[p], o.peers));
  }
  std::size_t size() const override { return views_.size(); }
  core::Environment& env(PeerId p) override { return *views_.at(p); }

 private:
  std::unique_ptr<core::relay::Reachability> reach_;
  std::vector<std::unique_ptr<core::relay::RelayedEnvironment>> envs_;
  std::vector<std::unique_ptr<VisiblePeers>> views_;
};

class RelayedFactory final : public BindingFactory {
 public:
  std::string name() const override { return "relayed"; }
  // Rates are measured on the messages delivered, and each crossed the relay in a frame a few
  // bytes longer (core/relay/relay_frame.h): within 1%.
  Traits traits() const override { return {true, 0, 0.01}; }
  std::unique_ptr<TestBinding> make(const BindingOptions& o) const override { return std::make_unique<RelayedBinding>(o); }
};

}  // namespace

std::unique_ptr<BindingFactory> relayed_binding() { return std::make_unique<RelayedFactory>(); }

}  // namespace swarmlab::conformance
