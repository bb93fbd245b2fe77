#pragma once
// A simulated collaboration for tests of services built on the DHT: peers on the latency network,
// each hosting a DhtNode behind a ServiceMux (more services can be added to the mux), all joined
// through peer 0.
#include <memory>
#include <string>
#include <vector>

#include "core/dht/node.h"
#include "core/service_mux.h"
#include "sim/engine.h"
#include "sim/network/latency_network.h"
#include "sim/binding/sim_world.h"

namespace swarmlab::core::testing {

struct DhtSwarm {
  sim::Engine engine;
  std::unique_ptr<sim::LatencyNetwork> network;
  std::unique_ptr<sim::SimWorld> world;
  std::vector<std::unique_ptr<ServiceMux>> muxes;
  std::vector<std::unique_ptr<dht::DhtNode>> nodes;

  // One peer per entry of `compute_sps`; one-way access latencies spread over 10–40 ms.
  explicit DhtSwarm(std::vector<double> compute_sps, std::uint64_t seed = 1) {
    const std::size_t n = compute_sps.size();
    std::vector<sim::LinkSpec> links(n);
    std::vector<sim::SimPeerSpec> specs(n);
    for (std::size_t i = 0; i < n; ++i) {
      links[i] = sim::LinkSpec{100e6, 50e6, 0.010 + 0.030 * static_cast<double>((i * 7) % n) / static_cast<double>(n)};
      specs[i] = {"peer-" + std::to_string(i), compute_sps[i]};
    }
    network = std::make_unique<sim::LatencyNetwork>(engine, std::move(links));
    world = std::make_unique<sim::SimWorld>(engine, *network, std::move(specs), seed);
    for (PeerId i = 0; i < n; ++i) {
      Environment& env = world->env(i);
      nodes.push_back(std::make_unique<dht::DhtNode>(env, dht::NodeId::random(env.rng())));
      muxes.push_back(std::make_unique<ServiceMux>());
      dht::DhtNode* node = nodes.back().get();
      muxes.back()->add(ServiceId::Dht, *node);
      env.set_sink(muxes.back().get());
    }
    nodes[0]->bootstrap({}, [](bool) {});
    for (PeerId i = 1; i < n; ++i)
      engine.at(0.02 * i, [this, i] { nodes[i]->bootstrap({0}, [](bool) {}); });
    engine.run_until(0.02 * static_cast<double>(n) + 5.0);
  }

  std::size_t size() const { return nodes.size(); }
  Environment& env(PeerId p) { return world->env(p); }
  Seconds now() const { return engine.now(); }
};

}  // namespace swarmlab::core::testing
