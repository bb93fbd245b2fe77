#pragma once
// A DhtSwarm whose peers each host a Matchmaker behind their ServiceMux, recording every group
// (or failure) each peer's look_for_group() delivers, and when.
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "core/matchmaking/matchmaker.h"
#include "support/dht_swarm.h"

namespace swarmlab::core::matchmaking::testing {

struct Result {
  std::optional<Group> group;
  Seconds at = 0;
};

struct MatchSwarm : core::testing::DhtSwarm {
  std::vector<std::unique_ptr<Matchmaker>> mm;
  std::vector<std::vector<Result>> results;  // per peer, one per look_for_group()

  MatchSwarm(std::size_t n, const std::function<MatchmakingConfig(PeerId)>& config, std::uint64_t seed = 1,
             Seconds clock_step = 0)
      : DhtSwarm(std::vector<double>(n, 100.0), seed, clock_step), results(n) {
    for (PeerId p = 0; p < n; ++p) {
      mm.push_back(std::make_unique<Matchmaker>(env(p), *nodes[p], config(p)));
      Matchmaker* m = mm.back().get();
      muxes[p]->add(ServiceId::Matchmaking, *m);
    }
  }

  void look(PeerId p, Seconds timeout = std::numeric_limits<double>::infinity()) {
    mm[p]->look_for_group([this, p](std::optional<Group> g) { results[p].push_back({std::move(g), now()}); }, timeout);
  }
  void look_at(Seconds t, PeerId p, Seconds timeout = std::numeric_limits<double>::infinity()) {
    world->at(t, [this, p, timeout] { look(p, timeout); });
  }
};

}  // namespace swarmlab::core::matchmaking::testing
