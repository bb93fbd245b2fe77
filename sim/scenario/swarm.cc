#include "sim/scenario/swarm.h"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>
#include <stdexcept>

#include "core/training/dht_coordinator.h"
#include "scenarios/nat_traversal.h"
#include "sim/scenario/availability.h"
#include "sim/scenario/peer_setup.h"

namespace swarmlab::sim {

using core::training::CollaborativePeer;

SimSwarm::SimSwarm(const scenarios::Scenario& sc, SwarmOptions options, SwarmHooks hooks)
    : sc_(sc), options_(std::move(options)), hooks_(std::move(hooks)) {
  if (sc.peers.empty() || sc.workload.parameters == 0)
    throw std::invalid_argument(sc.source + ": a collaboration needs peers and a workload");
  const auto n = static_cast<PeerId>(sc.peers.size());
  network_ = make_scenario_network(sc, options_.transport, options_.backend, engine_);
  std::vector<SimPeerSpec> specs;
  for (const auto& p : sc.peers) specs.push_back({p.name, p.compute_sps});
  world_ = std::make_unique<SimWorld>(engine_, *network_, std::move(specs), sc.seed);
  world_->set_trace(options_.trace);
  if (sc.nat_traversal) {
    reachability_ = std::make_shared<const core::relay::Reachability>(scenarios::reachability_config(sc));
    world_->set_connects([r = reachability_](PeerId a, PeerId b) { return r->direct(a, b); });
  }
  for (PeerId i = 0; i < n; ++i) {
    auto c = options_.averaging_only ? averaging_peer_config(sc, i, options_.transport)
                                     : training_peer_config(sc, i, options_.transport);
    if (options_.dpu && c.quota == 0) c.dpu = *options_.dpu;
    if (options_.strategy) c.strategy = *options_.strategy;
    c.roles_cache = roles_cache_;
    c.group_inputs = group_inputs_;
    c.reachability = reachability_;
    configs_.push_back(std::move(c));
  }
  if (options_.coordination == scenarios::Coordination::Oracle) {
    OracleOptions o;
    o.target = configs_.front().step_target();
    if (sc.averaging.group_size) o.group_size = static_cast<std::size_t>(*sc.averaging.group_size);
    oracle_ = std::make_unique<Oracle>(engine_, o);
  }
  // A replayed round moves its members' bytes only; relayed rounds load the relays too.
  if (options_.replay_rounds && options_.backend == "flow" && !reachability_ &&
      RoundReplay::stands_in_for(configs_.front().strategy)) {
    const double g = options_.transport.goodput_fraction;
    std::map<std::pair<PeerId, PeerId>, double> caps;
    for (const auto& cap : sc.pair_caps)  // one per ordered pair (the loader rejects duplicates)
      caps.emplace(std::pair{static_cast<PeerId>(cap.from), static_cast<PeerId>(cap.to)}, cap.bps * g);
    // When each peer's link next changes (a bandwidth trace row), it leaves as scheduled or any
    // peer arrives, in time order: looked up for every member of every replayed round.
    std::vector<std::vector<double>> changes = scheduled_departures(sc);
    for (const auto& e : sc.bandwidth.events)
      if (const auto i = sc.find_peer(e.peer)) changes[*i].push_back(e.time_s);
    const std::vector<double> arrivals = scheduled_arrivals(sc);
    for (auto& times : changes) {
      times.insert(times.end(), arrivals.begin(), arrivals.end());
      std::sort(times.begin(), times.end());
    }
    replay_ = std::make_unique<RoundReplay>(
        *world_,
        [this, g](PeerId p) {
          const auto [down, up] = sc_.peer_bandwidth(p, engine_.now());
          return LinkSpec{down * g, up * g, sc_.peers[p].latency_s};
        },
        [this, changes = std::move(changes)](PeerId p) {
          const auto next = std::upper_bound(changes[p].begin(), changes[p].end(), engine_.now());
          return next == changes[p].end() ? std::numeric_limits<double>::infinity() : *next;
        },
        [caps = std::move(caps)](PeerId from, PeerId to) {
          const auto it = caps.find({from, to});
          return it == caps.end() ? std::numeric_limits<double>::infinity() : it->second;
        });
  }
  if (sc.auth) auth_ = std::make_unique<SimAuth>(*sc.auth, n, sc.seed);
  authenticated_.resize(n);
  relayed_.resize(n);
  peers_.resize(n);
}

SimSwarm::~SimSwarm() {
  // Peers go before the world, oracle and replay they use.
  for (auto& p : peers_) p.reset();
  for (auto& a : authenticated_) a.reset();
  for (auto& r : relayed_) r.reset();
}

std::size_t SimSwarm::start() {
  for (PeerId i = 0; i < size(); ++i) {
    if (sc_.peer_up(i, 0)) bring_up(i);
    else world_->set_down(i, SimWorld::Departure::Silent);
  }
  started_ = true;  // peers brought up from now on are newcomers
  const std::size_t scheduled =
      schedule_availability(sc_, engine_, [this](PeerId i) { bring_up(i); }, [this](PeerId i) { take_down(i); });
  // A peer measures its link and announces the new rates in its next group.
  for (const auto& e : sc_.bandwidth.events) {
    const auto i = static_cast<PeerId>(*sc_.find_peer(e.peer));
    engine_.at(e.time_s, [this, i] {
      if (peers_[i]) peers_[i]->set_capacity(peer_capacity(sc_, i, engine_.now(), options_.transport));
    });
  }
  return scheduled;
}

core::training::CollaborativePeerEvents SimSwarm::events_for(PeerId i) {
  core::training::CollaborativePeerEvents e;
  if (hooks_.computed) e.computed = [this, i](std::uint64_t s) { hooks_.computed(i, s); };
  if (hooks_.grouped)
    e.grouped = [this, i](const core::matchmaking::Group& g, std::uint64_t step) { hooks_.grouped(i, g, step); };
  if (hooks_.round_started)
    e.round_started = [this, i](const core::averaging::RoundPlan& p, std::uint64_t c) { hooks_.round_started(i, p, c); };
  if (hooks_.round_finished)
    e.round_finished = [this, i](const core::averaging::RoundOutcome& o, std::uint64_t c, std::uint64_t s) {
      hooks_.round_finished(i, o, c, s);
    };
  e.sync_started = [this, i](PeerId provider) {
    if (replay_) replay_->download_began(i, provider);
    if (hooks_.sync_started) hooks_.sync_started(i, provider);
  };
  e.sync_finished = [this, i](bool ok, std::uint64_t s, bool updates) {
    if (replay_) replay_->download_ended(i);
    if (hooks_.sync_finished) hooks_.sync_finished(i, ok, s, updates);
  };
  if (hooks_.discarded) e.discarded = [this, i](std::uint64_t s) { hooks_.discarded(i, s); };
  return e;
}

void SimSwarm::bring_up(PeerId i) {
  if (peers_.at(i)) return;
  if (!world_->is_up(i)) world_->set_up(i);
  // The layers a peer's services run on: the relay below authentication, which stays end to end.
  core::Environment* base = &world_->env(i);
  if (reachability_) base = (relayed_[i] = std::make_unique<core::relay::RelayedEnvironment>(*base, *reachability_)).get();
  if (auth_) authenticated_[i] = auth_->authenticate(i, *base);
  core::Environment& env = auth_ ? authenticated_[i]->env() : *base;
  core::training::CollaborativePeerConfig config = configs_[i];
  config.capacity = peer_capacity(sc_, i, engine_.now(), options_.transport);
  core::training::PeerParts parts;
  if (oracle_) parts.coordinator = oracle_->coordinator(env, config.capacity.client_mode);
  else parts.coordinator = std::make_unique<core::training::DhtCoordinator>(env, dht_coordinator_config(sc_, config));
  VirtualLearnerOptions lo;
  lo.parameters = sc_.workload.parameters;
  lo.state_bytes = scenario_state_bytes(sc_);
  lo.instant = options_.averaging_only;
  if (options_.values) lo.values = options_.values(i);
  parts.learner = std::make_unique<VirtualLearner>(env, std::move(lo));
  if (replay_) parts.averager = replay_->averager(env, config.reduce_cost);
  peers_[i] = std::make_unique<CollaborativePeer>(env, std::move(config), std::move(parts), events_for(i));
  std::vector<PeerId> bootstrap;
  for (PeerId j = 0; j < size() && bootstrap.empty(); ++j)
    if (j != i && peers_[j]) bootstrap.push_back(j);
  if (replay_ && started_) replay_->peer_joined(i);
  if (hooks_.up) hooks_.up(i);
  peers_[i]->start(std::move(bootstrap));
}

void SimSwarm::take_down(PeerId i, SimWorld::Departure how) {
  if (!peers_.at(i)) return;
  if (hooks_.going_down) hooks_.going_down(i, *peers_[i]);
  if (replay_) replay_->peer_down(i);
  world_->set_down(i, how);
  peers_[i].reset();  // after set_down, so it cancels nothing twice
  authenticated_[i].reset();
  relayed_[i].reset();
}

}  // namespace swarmlab::sim
