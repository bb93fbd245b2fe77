#pragma once
// Benchmarks' swarm of bare averaging services: one AveragingService behind a ServiceMux per peer
// of a SimWorld, nothing else (no DHT, no schedule).
#include <memory>
#include <vector>

#include "core/averaging/averaging_service.h"
#include "core/service_mux.h"
#include "sim/binding/sim_world.h"

namespace swarmlab::bench {

struct AveragingSwarm {
  AveragingSwarm(sim::SimWorld& world, core::PeerId peers) {
    for (core::PeerId i = 0; i < peers; ++i) {
      services.push_back(std::make_unique<core::averaging::AveragingService>(world.env(i)));
      muxes.push_back(std::make_unique<core::ServiceMux>());
      muxes.back()->add(core::ServiceId::Averaging, *services.back());
      world.env(i).set_sink(muxes.back().get());
    }
  }
  std::vector<std::unique_ptr<core::averaging::AveragingService>> services;
  std::vector<std::unique_ptr<core::ServiceMux>> muxes;
};

}  // namespace swarmlab::bench
