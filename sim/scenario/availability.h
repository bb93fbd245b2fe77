#pragma once
// When a scenario's peers are up: join and leave times, and the churn trace.
#include <functional>
#include <vector>

#include "scenarios/scenario.h"
#include "sim/engine.h"
#include "sim/network/network.h"

namespace swarmlab::sim {

// Schedules the scenario's availability on `engine`: a join time, or a churn-trace "up" inside the
// peer's join/leave window, calls up(i); a leave time or a churn-trace "down" calls down(i).
// Returns the number of events scheduled.
std::size_t schedule_availability(const scenarios::Scenario& scenario, Engine& engine, std::function<void(PeerId)> up,
                                  std::function<void(PeerId)> down);

// The times at which schedule_availability calls down(i), per peer, in time order.
std::vector<std::vector<double>> scheduled_departures(const scenarios::Scenario& scenario);

// The times at which schedule_availability calls up(i) for any peer, in time order.
std::vector<double> scheduled_arrivals(const scenarios::Scenario& scenario);

}  // namespace swarmlab::sim
