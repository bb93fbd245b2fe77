#include "sim/experiments/reachability_experiment.h"

#include <stdexcept>
#include <tuple>

#include "scenarios/nat_traversal.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {
namespace {

// The planner's split for a round with every peer up, as strategy "ours" runs it.
void plan_round(const scenarios::Scenario& sc, ReachabilityVariant& v) {
  const core::planner::PlannerInput input = planner_input(sc, TransportAssumptions{});
  core::planner::PlannerOptions o;
  o.roles = core::planner::Roles::AllComputeCapable;
  o.objective = core::planner::Objective::AveragingOnly;
  const core::planner::Plan plan = core::planner::solve(input, o);
  for (std::size_t i = 0; i < sc.peers.size(); ++i)
    if (sc.peers[i].reachability == scenarios::Reachability::Client) v.client_share += plan.peers[i].fraction;
  v.planned_round_s = plan.round_time_s;
}

}  // namespace

ReachabilityResult run_reachability(const scenarios::Scenario& sc, std::optional<double> duration_s) {
  ReachabilityResult r;
  r.scenario = sc.name;
  r.peers = sc.peers.size();
  for (const auto& p : sc.peers) r.clients += p.reachability == scenarios::Reachability::Client;
  if (r.clients == 0) throw std::invalid_argument(sc.source + ": no peer has reachability \"client\": nothing to traverse");

  scenarios::NatTraversalSpec both = sc.nat_traversal.value_or(scenarios::NatTraversalSpec{});
  if (both.relays.empty())
    for (std::size_t i = 0; i < sc.peers.size(); ++i)
      if (sc.peers[i].reachability == scenarios::Reachability::Public) both.relays.push_back(i);
  both.hole_punching = true;
  r.relays = both.relays.size();
  {
    scenarios::Scenario s = sc;
    s.nat_traversal = both;
    for (auto nat : scenarios::reachability_config(s).nat) r.cone_clients += nat == core::relay::Nat::Cone;
  }

  TrainingRunConfig config;
  config.duration_s = duration_s;
  for (const auto& [name, relays, punching] : {std::tuple{"client mode alone", false, false}, std::tuple{"relays", true, false},
                                               std::tuple{"hole punching", false, true},
                                               std::tuple{"relays + hole punching", true, true}}) {
    scenarios::Scenario s = sc;
    ReachabilityVariant v;
    v.name = name;
    v.relays = relays;
    v.hole_punching = punching;
    if (relays || punching) {
      scenarios::NatTraversalSpec n = both;
      if (!relays) n.relays.clear();
      n.hole_punching = punching;
      s.nat_traversal = n;
    } else {
      s.nat_traversal.reset();
    }
    plan_round(s, v);
    v.training = run_training(s, config);
    r.variants.push_back(std::move(v));
  }
  return r;
}

}  // namespace swarmlab::sim
