#pragma once
// What a run will cost, estimated from its inputs before anything is allocated: simulated events
// and peak memory. A valid input that this machine cannot run in reasonable time or memory (a
// 10^12-parameter gradient in 1 KiB parts, 100,000 peers all-reducing, a lookup rate of 10^12 per
// hour) is refused in milliseconds, with the estimate and the flags that raise the budget
// (scenarios/README.md, "Limits"), instead of running for hours or until memory runs out.
//
// The estimates are upper bounds in order of magnitude, not predictions: each counts the messages
// the protocol must send (every part of every span, every lookup's requests) and the state it must
// hold (per-peer structures, n² pacing and cap matrices, traced spans).
#include <cstdint>
#include <string>

#include "core/averaging/role_assignment.h"
#include "scenarios/scenario.h"
#include "sim/experiments/dht_experiment.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {

struct RunBudget {
  double max_events = 5e8;          // --max-events (about a million events a second on the flow backend)
  double max_memory_gib = 8;        // --max-memory-gib
};

struct RunCost {
  double events = 0;
  double memory_bytes = 0;
  std::string what;  // how the estimate arises, for the message ("8 peers × 97 parts × 100 rounds")
};

// Averaging rounds (swarmlab sim, table1): `simulated_rounds` of them message by message, the rest
// replayed; `traced`: every message becomes a span in trace.json.
RunCost averaging_cost(const scenarios::Scenario& sc, core::averaging::Strategy strategy, std::uint64_t rounds,
                       bool replay, bool carry_values, bool traced);
// Collaborative training over `duration_s` (swarmlab train, albert, reach). Steps are at most the
// pooled compute over the target batch. Where the scenario's membership and capacities never change
// (no joins, leaves, churn, bandwidth trace or failures), the core's predicted round time bounds
// them too, with a margin of 2: an averaging-bound swarm takes far fewer steps, and its peers wait
// instead of computing (without delayed updates).
RunCost training_cost(const scenarios::Scenario& sc, double duration_s, bool dpu, const TransportAssumptions& transport);
// The events such a run is expected to take, for ordering runs (swarmlab albert, sweep), where
// training_cost bounds them: a DeDLOC step takes its compute plus, without delayed updates, the
// round time the core predicts for the scenario's strategy at the starting capacities, so
// averaging-bound setups take fewer steps and fewer events. training_cost's count where that
// prediction does not apply (DiLoCo, no compute, a strategy that cannot run).
double expected_training_events(const scenarios::Scenario& sc, double duration_s, bool dpu,
                                const TransportAssumptions& transport);
// The DHT scale experiment (swarmlab dht, sim on a DHT-only scenario).
RunCost dht_cost(const DhtExperimentConfig& config);

// Throws core::InputError(source, location, ...) naming the estimate, the budget and the flags
// when `cost` exceeds `budget`.
void check_budget(const RunCost& cost, const RunBudget& budget, const std::string& source, const std::string& location);

// The planner's size limit (core/input_limits.h): the LP with fixed roles (strategy "ours" in sim,
// table1, train and albert) solves up to kMaxPlannerPeers peers within seconds, the roles search
// (swarmlab plan) up to kMaxPlannerRolesPeers. Past it, throws core::InputError naming the scenario's peer
// count and the limit, instead of letting GLPK run for minutes or abort on memory.
void check_planner_size(const scenarios::Scenario& sc, bool roles_search, const std::string& command);

}  // namespace swarmlab::sim
