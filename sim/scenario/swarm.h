#pragma once
// A scenario's collaboration hosted in the simulator: one core::training::CollaborativePeer per
// scenario peer, each on its own simulated environment, brought up and down as the scenario says
// (join/leave times, churn trace) and re-announcing its links when the bandwidth trace changes
// them. The swarm decides nothing about the protocol; it hosts peers, moves bytes (the network
// model) and reports what happens to the books its experiment keeps (SwarmHooks).
//
// What it plugs into each peer: a coordinator (the oracle, sim/binding/oracle.h, or the DHT's,
// core/training/dht_coordinator.h), a virtual learner (sim/binding/virtual_learner.h) and, unless
// disabled, the round replay (sim/binding/round_replay.h). With the scenario's "auth" section, each
// peer runs on the allowlist authentication layer (sim/binding/sim_auth.h).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/averaging/roles_cache.h"
#include "core/relay/relayed_environment.h"
#include "core/training/collaborative_peer.h"
#include "scenarios/scenario.h"
#include "sim/binding/chrome_trace.h"
#include "sim/binding/oracle.h"
#include "sim/binding/round_replay.h"
#include "sim/binding/sim_auth.h"
#include "sim/binding/sim_world.h"
#include "sim/binding/virtual_learner.h"
#include "sim/engine.h"
#include "sim/network/network.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {

struct SwarmOptions {
  std::string backend = "flow";
  TransportAssumptions transport;
  scenarios::Coordination coordination = scenarios::Coordination::Oracle;
  // Averaging-only rounds (sim/scenario/peer_setup.h, averaging_peer_config) instead of training.
  bool averaging_only = false;
  // Overrides of the scenario's own settings.
  std::optional<bool> dpu;
  std::optional<core::averaging::Strategy> strategy;
  bool replay_rounds = true;  // flow backend only: ns-3's rounds depend on its connections' state
  ChromeTrace* trace = nullptr;
  // Real vectors for a peer's rounds (averaging-only runs that check values); none by default.
  std::function<std::optional<VirtualLearnerOptions::Values>(PeerId)> values;
};

// What the books hear. Every field may be empty.
struct SwarmHooks {
  std::function<void(PeerId, std::uint64_t samples)> computed;
  std::function<void(PeerId, const core::matchmaking::Group&, std::uint64_t step)> grouped;
  std::function<void(PeerId, const core::averaging::RoundPlan&, std::uint64_t contributed)> round_started;
  std::function<void(PeerId, const core::averaging::RoundOutcome&, std::uint64_t contributed, std::uint64_t step)>
      round_finished;
  std::function<void(PeerId, PeerId provider)> sync_started;
  std::function<void(PeerId, bool ok, std::uint64_t step, bool updates)> sync_finished;
  std::function<void(PeerId, std::uint64_t samples)> discarded;
  std::function<void(PeerId)> up;
  // Just before the peer's process dies; what it holds dies with it.
  std::function<void(PeerId, const core::training::CollaborativePeer&)> going_down;
};

class SimSwarm {
 public:
  // Throws std::invalid_argument for a scenario without peers or workload.
  SimSwarm(const scenarios::Scenario& scenario, SwarmOptions options, SwarmHooks hooks = {});
  ~SimSwarm();
  SimSwarm(const SimSwarm&) = delete;
  SimSwarm& operator=(const SimSwarm&) = delete;

  // Brings up the peers that are up at time 0 and schedules the scenario's availability and
  // link changes. Returns the number of availability events scheduled.
  std::size_t start();

  void bring_up(PeerId peer);
  void take_down(PeerId peer, SimWorld::Departure how = SimWorld::Departure::Crash);

  Engine& engine() { return engine_; }
  SimWorld& world() { return *world_; }
  Oracle* oracle() { return oracle_.get(); }
  const RoundReplay* replay() const { return replay_.get(); }
  const core::averaging::RolesCache& roles_cache() const { return *roles_cache_; }
  // The peer's relay layer (nullptr without "nat_traversal", or while it is down).
  const core::relay::RelayedEnvironment* relayed(PeerId peer) const { return relayed_.at(peer).get(); }
  std::size_t size() const { return peers_.size(); }
  bool is_up(PeerId peer) const { return static_cast<bool>(peers_.at(peer)); }
  core::training::CollaborativePeer* peer(PeerId peer) { return peers_.at(peer).get(); }
  const core::training::CollaborativePeerConfig& config(PeerId peer) const { return configs_.at(peer); }

 private:
  core::training::CollaborativePeerEvents events_for(PeerId peer);

  const scenarios::Scenario& sc_;
  SwarmOptions options_;
  SwarmHooks hooks_;
  Engine engine_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<SimWorld> world_;
  std::unique_ptr<Oracle> oracle_;
  std::unique_ptr<RoundReplay> replay_;
  bool started_ = false;  // start() brought up the peers that are up at time 0
  std::unique_ptr<SimAuth> auth_;  // when the scenario has "auth"
  std::shared_ptr<core::averaging::RolesCache> roles_cache_ = std::make_shared<core::averaging::RolesCache>();
  std::shared_ptr<core::training::GroupInputCache> group_inputs_ = std::make_shared<core::training::GroupInputCache>();
  std::vector<core::training::CollaborativePeerConfig> configs_;
  // From "nat_traversal": who reaches whom, and each peer's relay layer (under authenticated_).
  std::shared_ptr<const core::relay::Reachability> reachability_;
  std::vector<std::unique_ptr<core::relay::RelayedEnvironment>> relayed_;
  std::vector<std::unique_ptr<core::auth::AuthenticatedPeer>> authenticated_;        // under peers_, when auth_
  std::vector<std::unique_ptr<core::training::CollaborativePeer>> peers_;  // null while down
};

}  // namespace swarmlab::sim
