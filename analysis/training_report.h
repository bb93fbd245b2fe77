#pragma once
// Metrics of a simulated training run as JSON and CSV (optimizer steps per hour, samples/s over
// time, per-peer utilisation, idle and averaging time, traffic per device per hour, active peers).
#include <string>

#include <nlohmann/json.hpp>

#include "sim/experiments/training_experiment.h"

namespace swarmlab::analysis {

nlohmann::ordered_json to_json(const sim::TrainingRunResult& run);
// Writes <dir>/<stem>.json, <stem>_series.csv (t_s, samples_per_s, active_peers, steps),
// <stem>_peers.csv (one row per peer) and <stem>_steps.csv (step, t_s). Throws on I/O errors.
void write_training_outputs(const sim::TrainingRunResult& run, const std::string& dir, const std::string& stem);

}  // namespace swarmlab::analysis
