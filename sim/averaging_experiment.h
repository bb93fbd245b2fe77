#pragma once
// Runs averaging rounds of a scenario's collaboration over a simulated network: every peer hosts
// the core's AveragingService, the driver starts round r+1 when every member has finished round r,
// and the time of a round is the time until its last member finished.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/averaging/butterfly_round.h"
#include "core/averaging/role_assignment.h"
#include "core/codec/codec.h"
#include "scenarios/scenario.h"
#include "sim/chrome_trace.h"
#include "sim/engine.h"
#include "sim/network.h"
#include "sim/sim_world.h"

namespace swarmlab::sim {

// Constants of the transport model, held fixed across every experiment that reports them.
struct TransportAssumptions {
  // Share of a link's nominal rate that the averaging application achieves. Headers alone would
  // leave 1448/1538 = 0.94 (TCP/IPv4 with timestamps over Ethernet); the rest of the loss is the
  // hivemind-era software stack. DeDLOC's Table 1 implies 60% (1 Gb/s peers) to 81% (the 2.5 Gb/s
  // server of setup D) of line rate; 0.735 is the one value that minimises the worst of the 12
  // cells' errors (README, "Reproducing Table 1"). It is a constant of the model, not of a cell.
  double goodput_fraction = 0.735;
};

// A failure injected into a run: peer `peer` leaves during round `round`, either after it has
// delivered `after_fraction` of the messages it sends in that round, or `at_s` seconds into it.
struct InjectedFailure {
  core::PeerId peer = 0;
  std::uint32_t round = 0;
  double after_fraction = -1;  // in [0, 1]; used when >= 0
  double at_s = -1;            // used when after_fraction < 0
  SimWorld::Departure how = SimWorld::Departure::Crash;
  bool rejoin_next_round = true;  // back up (with its state) when the next round starts
};

struct AveragingRunConfig {
  core::averaging::Strategy strategy = core::averaging::Strategy::Planned;
  std::uint32_t rounds = 1;
  std::string backend = "flow";
  TransportAssumptions transport;
  core::averaging::Timeouts timeouts;
  // Carry real vectors (random values, checked against the exact weighted average) instead of
  // sizes only.
  bool carry_values = false;
  ChromeTrace* trace = nullptr;
  // Failures on top of the scenario's own (per-peer failure_rate each round, join/leave times and
  // churn trace, which take peers down as crashes).
  std::vector<InjectedFailure> failures;
  // Called after each round with (round index, rounds) for progress display.
  std::function<void(std::uint32_t, std::uint32_t)> on_round;
};

struct RoundRecord {
  std::uint32_t round = 0;
  double started_s = 0;
  double duration_s = 0;              // until the last surviving member finished
  std::size_t participants = 0;       // members at the start of the round
  std::size_t groups = 1;             // averaging groups (one butterfly over all members)
  std::size_t failures = 0;           // members that left during the round
  std::size_t incomplete = 0;         // surviving members whose round timed out
  double min_fraction_averaged = 1;   // over surviving senders
  double mean_fraction_averaged = 1;  // over surviving senders
  double max_abs_error = 0;           // carry_values and no failure: max |x - exact weighted average|
};

struct AveragingRunResult {
  std::string scenario;
  std::string strategy;
  std::string backend;
  core::averaging::RoleAssignment roles;
  std::vector<RoundRecord> rounds;
  double mean_round_s = 0;
  std::vector<std::uint64_t> bytes_sent;   // per peer, whole run
  std::uint64_t events = 0;
  std::uint64_t payload_bytes_per_round = 0;  // encoded gradient bytes one sender moves per round
};

core::codec::Codec codec_for(scenarios::WirePrecision precision);
core::averaging::Strategy strategy_for(scenarios::AveragingStrategy strategy);
// The planner's view of a scenario's peers (capacities as the transport delivers them).
core::planner::PlannerInput planner_input(const scenarios::Scenario& scenario, const TransportAssumptions& transport);

// The simulated network of a scenario: access links scaled by the transport's goodput, pair caps,
// and the bandwidth trace scheduled on `engine` (each row changes a link at its time).
std::unique_ptr<Network> make_scenario_network(const scenarios::Scenario& scenario, const TransportAssumptions& transport,
                                               const std::string& backend, Engine& engine);
// The scenario's averaging timeouts where it sets them, `defaults` elsewhere.
core::averaging::Timeouts scenario_timeouts(const scenarios::Scenario& scenario, core::averaging::Timeouts defaults);
// Schedules the scenario's availability on `engine`: a join time, or a churn-trace "up" inside the
// peer's join/leave window, calls up(i); a leave time or a churn-trace "down" calls down(i).
void schedule_availability(const scenarios::Scenario& scenario, Engine& engine, std::function<void(PeerId)> up,
                           std::function<void(PeerId)> down);
// The simulated peers of a scenario (names and compute speeds), in scenario order.
std::vector<SimPeerSpec> sim_peers(const scenarios::Scenario& scenario);

AveragingRunResult run_averaging(const scenarios::Scenario& scenario, const AveragingRunConfig& config);

}  // namespace swarmlab::sim
