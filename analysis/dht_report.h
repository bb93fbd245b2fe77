#pragma once
// The DHT scale experiment's report: JSON and text (swarmlab dht, swarmlab sim on a DHT scenario).
#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/experiments/dht_experiment.h"

namespace swarmlab::analysis {

nlohmann::ordered_json to_json(const sim::DhtExperimentResult& result);
void print_text(const sim::DhtExperimentResult& result, std::ostream& out);

}  // namespace swarmlab::analysis
