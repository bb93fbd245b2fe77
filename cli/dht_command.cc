// swarmlab dht: the Kademlia scale experiment (sim/dht_experiment.h).
#include <iomanip>
#include <iostream>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "analysis/dht_report.h"
#include "sim/experiments/dht_experiment.h"

namespace swarmlab::cli {
namespace {


const bool registered = register_command(
    "dht", "Kademlia DHT at scale: success rate, hops, latency and traffic under churn",
    [](CLI::App& sub) -> std::function<int()> {
      auto config = std::make_shared<sim::DhtExperimentConfig>();
      auto json = std::make_shared<bool>(false);
      sub.add_option("--peers", config->peers, "number of peers (2 to 100000)")->check(CLI::Range(2u, 100000u));
      sub.add_option("--churn-per-hour", config->churn_per_hour, "fraction of peers replaced per simulated hour")
          ->check(CLI::Range(0.0, 100.0));
      sub.add_option("--hours", config->hours, "simulated hours measured after joining and settling")
          ->check(CLI::Range(0.0, 1000.0));
      sub.add_option("--seed", config->seed, "random seed");
      sub.add_option("--gets-per-peer-hour", config->gets_per_peer_per_hour, "lookups per peer per hour")
          ->check(CLI::NonNegativeNumber);
      sub.add_option("--puts-per-peer-hour", config->puts_per_peer_per_hour, "new keys per peer per hour")
          ->check(CLI::NonNegativeNumber);
      sub.add_flag("--json", *json, "print the result as JSON");
      return [config, json] {
        const sim::DhtExperimentResult r = sim::run_dht_experiment(*config);
        if (*json)
          std::cout << analysis::to_json(r).dump(2) << "\n";
        else
          analysis::print_text(r, std::cout);
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
