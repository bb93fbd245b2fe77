#pragma once
// What one scenario peer is to the core: the configuration of its CollaborativePeer and of a DHT
// coordinator for it. Every host of scenario peers (the simulator's experiments, the live launcher)
// builds them here, so a scenario means the same collaboration everywhere.
#include <cstddef>
#include <cstdint>

#include "core/training/collaborative_peer.h"
#include "core/training/dht_coordinator.h"
#include "scenarios/scenario.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {

// Parameters + optimizer state a state download moves (training.state_bytes_per_parameter).
std::uint64_t scenario_state_bytes(const scenarios::Scenario& scenario);

// The scenario's averaging timeouts as bounds of the adaptive ones (core/training/round_timeouts.h).
core::training::RoundTimeoutBounds scenario_timeout_bounds(const scenarios::Scenario& scenario);

// Peer `i`'s CollaborativePeer as the scenario trains it (training.mode, dpu, micro-batches, the
// averaging strategy and codec), announcing its links as they are at time `t`.
core::training::CollaborativePeerConfig training_peer_config(const scenarios::Scenario& scenario, std::size_t i,
                                                             const TransportAssumptions& transport, double t = 0);

// The same peer in an averaging-only run (Table 1, fault and Moshpit measurements): every
// computing peer contributes one sample (weight 1) per round, rounds follow each other at once, and
// there is no model to load.
core::training::CollaborativePeerConfig averaging_peer_config(const scenarios::Scenario& scenario, std::size_t i,
                                                              const TransportAssumptions& transport);

// A DHT coordinator for that peer: its run's progress key and step target, one averaging group of
// up to the whole collaboration (or Moshpit-sized groups on a grid), DeDLOC ALBERT's 30 s record
// expiration (docs/hivemind.md §1).
core::training::DhtCoordinatorConfig dht_coordinator_config(const scenarios::Scenario& scenario,
                                                            const core::training::CollaborativePeerConfig& peer);

}  // namespace swarmlab::sim
