#pragma once
// A collaboration for tests of services built on the DHT: peers in a MemoryWorld, each hosting a
// DhtNode behind a ServiceMux (more services can be added to the mux), all joined through peer 0.
// With `clock_step`, each peer's clock moves by that much at every read, as live mode's does
// (moving_clock_environment.h); env(p) is then that clock.
#include <memory>
#include <string>
#include <vector>

#include "core/dht/node.h"
#include "core/service_mux.h"
#include "support/memory_world.h"
#include "support/moving_clock_environment.h"

namespace swarmlab::core::testing {

struct DhtSwarm {
  std::unique_ptr<MemoryWorld> world;
  std::vector<std::unique_ptr<ServiceMux>> muxes;
  std::vector<std::unique_ptr<dht::DhtNode>> nodes;
  std::vector<std::unique_ptr<MovingClockEnvironment>> clocks;

  // One peer per entry of `compute_sps`; one-way access latencies spread over 10–40 ms, 50 Mb/s up.
  explicit DhtSwarm(std::vector<double> compute_sps, std::uint64_t seed = 1, Seconds clock_step = 0) {
    const std::size_t n = compute_sps.size();
    std::vector<PeerSpec> specs(n);
    for (std::size_t i = 0; i < n; ++i)
      specs[i] = {0.010 + 0.030 * static_cast<double>((i * 7) % n) / static_cast<double>(n), 50e6, compute_sps[i]};
    world = std::make_unique<MemoryWorld>(std::move(specs), seed);
    for (PeerId i = 0; i < n && clock_step > 0; ++i)
      clocks.push_back(std::make_unique<MovingClockEnvironment>(world->env(i), clock_step));
    for (PeerId i = 0; i < n; ++i) {
      Environment& env = this->env(i);
      nodes.push_back(std::make_unique<dht::DhtNode>(env, dht::NodeId::random(env.rng())));
      muxes.push_back(std::make_unique<ServiceMux>());
      dht::DhtNode* node = nodes.back().get();
      muxes.back()->add(ServiceId::Dht, *node);
      env.set_sink(muxes.back().get());
    }
    nodes[0]->bootstrap({}, [](bool) {});
    for (PeerId i = 1; i < n; ++i)
      world->at(0.02 * i, [this, i] { nodes[i]->bootstrap({0}, [](bool) {}); });
    world->run_until(0.02 * static_cast<double>(n) + 5.0);
  }

  std::size_t size() const { return nodes.size(); }
  Environment& env(PeerId p) { return clocks.empty() ? world->env(p) : *clocks[p]; }
  Seconds now() const { return world->now(); }
  void run_for(Seconds d) { world->run_for(d); }
};

}  // namespace swarmlab::core::testing
