#pragma once
// Averaging rounds of a scenario's collaboration over a simulated network, back to back (DeDLOC's
// Table 1, fault and Moshpit measurements). Every peer is the core's CollaborativePeer in its
// averaging-only form (sim/scenario/peer_setup.h): each computing peer contributes one sample per
// round, so rounds follow each other at once and weights are 1. The oracle coordinator forms each
// round's group (or Moshpit groups) the moment every live peer is ready; with "dht" coordination the
// peers find their groups by matchmaking, as the live mode does. This driver injects the failures,
// counts and times the rounds (round r = the groups that produce global step r + 1), and checks
// values when asked.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/averaging/butterfly_round.h"
#include "core/averaging/role_assignment.h"
#include "scenarios/scenario.h"
#include "sim/binding/chrome_trace.h"
#include "sim/binding/sim_world.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {

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
  scenarios::Coordination coordination = scenarios::Coordination::Oracle;
  // Replay rounds identical to one already simulated (sim/binding/round_replay.h): on when nothing
  // fails on purpose, since injected failures count messages the replay would not send.
  bool replay_rounds = true;
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
  double started_s = 0;                // when its first member started
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

AveragingRunResult run_averaging(const scenarios::Scenario& scenario, const AveragingRunConfig& config);

}  // namespace swarmlab::sim
