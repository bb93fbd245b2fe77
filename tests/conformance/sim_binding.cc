// The simulator's binding (sim::SimWorld) over each of its network backends.
#include <memory>
#include <string>
#include <vector>

#include "bindings.h"
#include "sim/binding/sim_world.h"
#include "sim/engine.h"
#include "sim/network/flow_network.h"
#include "sim/network/latency_network.h"
#include "sim/network/ns3/ns3_network.h"

namespace swarmlab::conformance {
namespace {

class SimBinding final : public TestBinding {
 public:
  SimBinding(const std::string& backend, const BindingOptions& o) {
    std::vector<sim::LinkSpec> links(o.peers, sim::LinkSpec{o.link_bps, o.link_bps, o.latency});
    if (backend == "flow") network_ = std::make_unique<sim::FlowNetwork>(engine_, std::move(links));
    else if (backend == "latency") network_ = std::make_unique<sim::LatencyNetwork>(engine_, std::move(links));
    else network_ = sim::make_ns3_network(engine_, std::move(links));
    std::vector<sim::SimPeerSpec> specs;
    for (std::size_t i = 0; i < o.peers; ++i) specs.push_back({"peer-" + std::to_string(i), o.compute_sps});
    world_ = std::make_unique<sim::SimWorld>(engine_, *network_, std::move(specs), o.seed);
  }
  std::size_t size() const override { return world_->size(); }
  core::Environment& env(PeerId p) override { return world_->env(p); }
  Seconds now() const override { return engine_.now(); }
  bool run_until(const std::function<bool()>& done, Seconds deadline) override {
    while (!done()) {
      if (engine_.now() >= deadline || !engine_.step()) {
        if (engine_.now() < deadline) engine_.run_until(deadline);
        return done();
      }
    }
    return true;
  }
  void crash(PeerId p) override { world_->set_down(p, sim::SimWorld::Departure::Crash); }
  void vanish(PeerId p) override { world_->set_down(p, sim::SimWorld::Departure::Silent); }

 private:
  sim::Engine engine_;
  std::unique_ptr<sim::Network> network_;
  std::unique_ptr<sim::SimWorld> world_;
};

class SimFactory final : public BindingFactory {
 public:
  SimFactory(std::string backend, double pacing_tolerance)
      : backend_(std::move(backend)), pacing_tolerance_(pacing_tolerance) {}
  std::string name() const override { return backend_; }
  Traits traits() const override { return {true, 0, pacing_tolerance_}; }
  std::unique_ptr<TestBinding> make(const BindingOptions& o) const override {
    return std::make_unique<SimBinding>(backend_, o);
  }

 private:
  std::string backend_;
  double pacing_tolerance_;
};

}  // namespace

std::unique_ptr<BindingFactory> flow_binding() { return std::make_unique<SimFactory>("flow", 1e-9); }
std::unique_ptr<BindingFactory> latency_binding() { return std::make_unique<SimFactory>("latency", 1e-9); }
std::unique_ptr<BindingFactory> ns3_binding() { return std::make_unique<SimFactory>("ns3", 0.05); }

}  // namespace swarmlab::conformance
