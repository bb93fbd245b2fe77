#pragma once
// Runs a scenario's collaborative training over a simulated network for a stretch of wall time
// (docs/dedloc.md §1, §5; docs/opendiloco.md §1): every peer hosts the core's Trainer
// (micro-batches through Environment::compute), AveragingService (butterfly rounds with the
// planner's roles) and StateService (state download for joiners and stragglers).
//
// Coordination shortcut (training.coordination = "exact", the default): the driver counts the
// collaboration's accumulated samples exactly, as a ProgressTracker with zero staleness would, and
// all peers at the global step form one group. "dht" runs every peer's own schedule instead
// (sim/collaborative_training.h); README "Training" compares the two.
//
// Speed shortcut: averaging rounds whose membership has been simulated before, with no state
// download on the network, replay the first such round's per-member finish times and bytes (the
// fluid model is deterministic, so an identical round on an otherwise idle network takes identical
// time). Set replay_identical_rounds = false to simulate every round.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/averaging/butterfly_round.h"
#include "core/training/sample_ledger.h"
#include "scenarios/scenario.h"
#include "sim/averaging_experiment.h"

namespace swarmlab::sim {

struct TrainingRunConfig {
  std::string backend = "flow";
  TransportAssumptions transport;
  core::averaging::Timeouts timeouts;  // the scenario's averaging timeouts override these
  bool replay_identical_rounds = true;
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
  double wait_s = 0;          // DiLoCo: done with its local steps, waiting for the slowest worker
  double sync_s = 0;          // downloading state
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  double traffic_gb_per_hour = 0;  // (sent + received) / up hours, in 10^9 bytes
  std::uint64_t samples = 0;       // computed
  std::uint64_t state_downloads = 0;
  std::uint64_t step = 0;          // its optimizer step at the end
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
  std::string mode;  // "dedloc" or "diloco"
  std::string coordination = "exact";  // "exact" (the simulator) or "dht" (every peer on its own)
  bool dpu = false;
  double duration_s = 0;
  std::uint64_t steps = 0;        // global (outer, for DiLoCo) optimizer steps
  double steps_per_hour = 0;
  std::uint64_t local_steps_per_step = 1;  // DiLoCo H
  std::vector<double> step_times;          // when each global step completed
  double averaging_s = 0;         // wall time with a round in flight
  double mean_round_s = 0;
  std::uint64_t rounds_simulated = 0, rounds_replayed = 0;
  core::training::SampleLedger ledger;
  std::uint64_t pending_check = 0;  // Σ accumulated + Σ contributed to the round in flight, at the end
  std::vector<PeerTrainingStats> peers;
  std::vector<TrainingTimePoint> series;
  std::uint64_t state_downloads = 0;
  std::uint64_t state_bytes = 0;    // per download
  std::uint64_t gradient_bytes = 0; // encoded gradient, per sender per round
  // Means over peers that compute.
  double mean_utilisation = 0, mean_idle_s = 0, mean_averaging_s = 0, mean_wait_s = 0, mean_traffic_gb_per_hour = 0;
  std::uint64_t events = 0;
};

// Fills what follows from each peer's times and bytes (idle time, utilisation, traffic per hour)
// and the means over peers that compute. Both training drivers end with it.
void summarise_peers(TrainingRunResult& result);

// Runs with the scenario's (or the config's) coordination: "exact" here, "dht" in
// sim/collaborative_training.h.
TrainingRunResult run_training(const scenarios::Scenario& scenario, const TrainingRunConfig& config = {});

}  // namespace swarmlab::sim
