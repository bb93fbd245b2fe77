#pragma once
// What NAT traversal is worth (docs/trust.md §4): one collaboration with client-mode peers trained
// four ways - client mode alone (NAT'd peers aggregate nothing), relays, hole punching, and both -
// with everything else the same. For each: steps/h, the mean round, the share of the gradient the
// client peers aggregate in the planned round, and the bytes the relays forwarded.
#include <optional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::sim {

struct ReachabilityVariant {
  std::string name;        // "client mode alone", "relays", "hole punching", "relays + hole punching"
  bool relays = false, hole_punching = false;
  double client_share = 0;  // Σ fractions of client peers in the round with everyone up (the planner's split)
  double planned_round_s = 0;
  TrainingRunResult training;
};

struct ReachabilityResult {
  std::string scenario;
  std::size_t peers = 0, clients = 0, relays = 0;
  std::size_t cone_clients = 0;  // client peers whose NAT is a cone (hole punching works between two)
  std::vector<ReachabilityVariant> variants;
};

// Throws std::invalid_argument for a scenario without client peers. Relays: the scenario's
// nat_traversal.relays, or every public peer when it names none (or has no nat_traversal);
// cone_share and explicit NAT types as the scenario says.
ReachabilityResult run_reachability(const scenarios::Scenario& sc, std::optional<double> duration_s = std::nullopt);

}  // namespace swarmlab::sim
