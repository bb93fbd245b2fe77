#pragma once
// A scenario's collaborative training over a simulated network for a stretch of time
// (docs/dedloc.md §1, §5; docs/opendiloco.md §1). Every peer runs the core's CollaborativePeer
// (sim/scenario/swarm.h); this driver only keeps the books: optimizer steps, where every sample
// went, per-peer time and traffic, who was left out of which step.
//
// Coordination (training.coordination, or the config's override): "oracle" counts samples with
// zero staleness and forms groups instantly (fast sweeps); "dht" runs the DHT progress records and
// matchmaking every real peer runs. Both drive the same peer; `swarmlab albert` compares them.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/training/sample_ledger.h"
#include "scenarios/scenario.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {

struct TrainingRunConfig {
  std::string backend = "flow";
  TransportAssumptions transport;
  bool replay_rounds = true;           // sim/binding/round_replay.h
  std::optional<double> duration_s;    // overrides training.duration_s
  std::optional<bool> dpu;             // overrides training.dpu
  std::optional<scenarios::Coordination> coordination;  // overrides training.coordination
};

struct PeerTrainingStats {
  std::string name;
  bool computes = false;
  double up_s = 0;
  double compute_s = 0;       // device busy
  double idle_s = 0;          // up but not computing (averaging in sequence, syncing, waiting)
  double utilisation = 0;     // compute_s / up_s (0 for peers without accelerator)
  double averaging_s = 0;     // time inside averaging rounds
  double wait_s = 0;          // quota reached (DiLoCo), waiting for the slowest worker
  double sync_s = 0;          // downloading state
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  std::uint64_t relayed_bytes = 0;  // forwarded for client pairs as their relay (in bytes_sent too)
  double traffic_gb_per_hour = 0;  // (sent + received) / up hours, in 10^9 bytes
  std::uint64_t samples = 0;       // computed
  double vcu = 0;                  // Hydra's compute reward for its samples in steps (docs/hydra.md §3)
  std::uint64_t state_downloads = 0;   // whole states
  std::uint64_t update_downloads = 0;  // the steps missed since a state it held
  std::uint64_t step = 0;          // its optimizer step at the end
  std::uint64_t lineage = 0;       // names the state it holds then (core/training/state_lineage.h)
  // Global steps this peer could have joined (up, training, up to date when the step's first
  // group formed) and those it joined no group for.
  std::uint64_t steps_eligible = 0, steps_left_out = 0;
  bool up_at_end = false;
  bool training_at_end = false;    // up and not syncing
};

struct TrainingTimePoint {
  double t_s = 0;             // end of the bucket
  double samples_per_s = 0;   // over the bucket
  std::size_t active_peers = 0;  // compute peers up and training at t_s
  std::uint64_t steps = 0;       // global steps by t_s
};

struct TrainingRunResult {
  std::string scenario;
  std::string mode;           // "dedloc" or "diloco"
  std::string coordination;   // "oracle" or "dht"
  bool authenticated = false; // the scenario's "auth": every message signed and checked
  bool dpu = false;
  double duration_s = 0;
  std::uint64_t steps = 0;        // global (outer, for DiLoCo) optimizer steps
  double steps_per_hour = 0;
  std::uint64_t local_steps_per_step = 1;  // DiLoCo H
  std::vector<double> step_times;          // when each global step completed
  std::uint64_t rounds = 0;       // averaging groups that ran (several per step when split)
  double averaging_s = 0;         // wall time with a round in flight
  double mean_round_s = 0;        // averaging_s / steps
  std::uint64_t rounds_simulated = 0, rounds_replayed = 0;
  core::training::SampleLedger ledger;
  std::uint64_t pending_check = 0;  // Σ accumulated + Σ contributed to rounds in flight, at the end
  std::vector<PeerTrainingStats> peers;
  std::vector<TrainingTimePoint> series;
  std::uint64_t state_downloads = 0;   // whole states
  std::uint64_t update_downloads = 0;  // the steps missed since a state held
  std::uint64_t state_bytes = 0;    // per download
  std::uint64_t gradient_bytes = 0; // encoded gradient, per sender per round
  double max_left_out_share = 0;    // over peers: steps_left_out / steps_eligible
  std::uint64_t relayed_bytes = 0;  // forwarded by relays, all peers (docs/trust.md §4)
  bool nat_traversal = false;       // the scenario's "nat_traversal": relays and hole punching
  // Means over peers that compute.
  double mean_utilisation = 0, mean_idle_s = 0, mean_averaging_s = 0, mean_wait_s = 0, mean_traffic_gb_per_hour = 0;
  std::uint64_t events = 0;
  double vcu_reference_sps = 0;     // the reference machine of the compute reward
  double vcu_total = 0;
};

// Throws std::invalid_argument for a scenario that does not train (no peers or workload).
TrainingRunResult run_training(const scenarios::Scenario& scenario, const TrainingRunConfig& config = {});

}  // namespace swarmlab::sim
