#pragma once
// A little collaboration for protocol tests: peers in the core's memory world, each hosting an
// AveragingService behind a ServiceMux, as the simulator wires them.
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/averaging/averaging_service.h"
#include "core/averaging/role_assignment.h"
#include "core/service_mux.h"
#include "support/memory_world.h"

namespace swarmlab::core::averaging::testing {

using core::testing::MemoryWorld;
using core::testing::PeerSpec;

struct Swarm {
  std::unique_ptr<MemoryWorld> world;
  std::vector<std::unique_ptr<AveragingService>> services;
  std::vector<std::unique_ptr<ServiceMux>> muxes;
  std::vector<RoundOutcome> outcomes;
  std::vector<PeerId> finished_peers;

  // `cost`: what every peer's rounds charge for CenteredClip (core/averaging/reduce_cost.h).
  explicit Swarm(std::vector<PeerSpec> peers, ReduceCost cost = {}) {
    const std::size_t n = peers.size();
    world = std::make_unique<MemoryWorld>(std::move(peers), 1);
    for (PeerId i = 0; i < n; ++i) {
      services.push_back(std::make_unique<AveragingService>(world->env(i), nullptr, cost));
      muxes.push_back(std::make_unique<ServiceMux>());
      AveragingService* s = services.back().get();
      muxes.back()->add(ServiceId::Averaging, *s);
      world->env(i).set_sink(muxes.back().get());
    }
  }

  void start(const RoundPlan& plan, std::vector<std::vector<float>>* values, Timeouts timeouts = {}) {
    for (std::size_t m = 0; m < plan.size(); ++m) {
      const PeerId p = plan.members[m];
      std::span<float> v;
      if (values) v = (*values)[p];
      services[p]->start_round(plan, v, timeouts, [this, p](const RoundOutcome& o) {
        outcomes.push_back(o);
        finished_peers.push_back(p);
      });
    }
  }
};

// n peers uploading at `bps` each, `latency` one-way access latency each.
inline std::vector<PeerSpec> uniform_links(std::size_t n, double bps, double latency = 0.001) {
  return std::vector<PeerSpec>(n, PeerSpec{latency, bps, 1.0});
}

inline RoundPlan plan_for(std::vector<double> weights, std::vector<double> fractions, std::uint64_t length,
                          codec::Codec codec = codec::Codec::Fp32, std::uint64_t part_bytes = 4096) {
  RoleAssignment roles;
  roles.weights = std::move(weights);
  roles.fractions = std::move(fractions);
  return make_round_plan(1, roles, length, codec, part_bytes);
}

}  // namespace swarmlab::core::averaging::testing
