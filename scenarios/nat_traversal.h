#pragma once
// A scenario's reachability table (docs/trust.md §4): public peers, client peers behind their NAT
// (as given by "nat", or drawn from the scenario's seed with nat_traversal.cone_share), and the
// relays with their access links. The simulator and the live launcher build it the same way, so a
// scenario's relayed pairs are the same in both.
#include "core/relay/reachability.h"
#include "scenarios/scenario.h"

namespace swarmlab::scenarios {

// Requires sc.nat_traversal (std::logic_error otherwise).
core::relay::ReachabilityConfig reachability_config(const Scenario& sc);

}  // namespace swarmlab::scenarios
