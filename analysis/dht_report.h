#pragma once
// The DHT scale experiment's report: JSON and text (swarmlab dht, swarmlab sim on a DHT scenario).
#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/experiments/dht_experiment.h"

namespace swarmlab::analysis {

// Everything the run determines (same config and seed, same JSON): no wall-clock figure.
nlohmann::ordered_json to_json(const sim::DhtExperimentResult& result);
// The wall-clock timings, for a separate run-info file.
nlohmann::ordered_json run_info_json(const sim::DhtExperimentResult& result);
void print_text(const sim::DhtExperimentResult& result, std::ostream& out);

}  // namespace swarmlab::analysis
