#pragma once
// Collaborative training with no global view (training.coordination = "dht"): every peer runs
// core::training::CollaborativePeer over the simulated network - DHT, progress records,
// matchmaking, butterfly rounds, state downloads - and the simulator only brings peers up and
// down (join/leave times, churn trace), changes links (bandwidth trace) and keeps the books. The
// same metrics as run_training's exact coordination, so the two can be compared.
#include "scenarios/scenario.h"
#include "sim/training_experiment.h"

namespace swarmlab::sim {

// DeDLOC schedule only; throws std::invalid_argument for DiLoCo.
TrainingRunResult run_collaborative_training(const scenarios::Scenario& scenario, const TrainingRunConfig& config);

}  // namespace swarmlab::sim
