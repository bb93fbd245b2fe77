// swarmlab dht: the Kademlia scale experiment (sim/experiments/dht_experiment.h).
#include <iomanip>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "core/input_limits.h"
#include "sim/experiments/run_cost.h"
#include "analysis/dht_report.h"
#include "sim/experiments/dht_experiment.h"

namespace swarmlab::cli {
namespace {


const bool dht_registered = register_command(
    "dht", "Kademlia DHT at scale: success rate, hops, latency and traffic under churn",
    [](CLI::App& sub) -> std::function<int()> {
      auto config = std::make_shared<sim::DhtExperimentConfig>();
      auto json = std::make_shared<bool>(false);
      auto variant = std::make_shared<std::string>("hivemind");
      auto list_size = std::make_shared<std::size_t>(20);
      namespace limits = core::limits;
      sub.add_option("--peers", config->peers, "number of peers (2 to 100000)")->check(Count(2, 100000, "a number of peers"));
      sub.add_option("--churn-per-hour", config->churn_per_hour, "fraction of peers replaced per simulated hour")
          ->check(Real(0, limits::kMaxChurnPerHour, "a fraction per hour"));
      sub.add_option("--hours", config->hours, "simulated hours measured after joining and settling")
          ->check(Real(0, 1000, "a number of hours"));
      sub.add_option("--seed", config->seed, "random seed")->check(Seed());
      sub.add_option("--gets-per-peer-hour", config->gets_per_peer_per_hour, "lookups per peer per hour")
          ->check(Real(0, limits::kMaxOpsPerPeerHour, "a number of lookups per peer-hour"));
      sub.add_option("--puts-per-peer-hour", config->puts_per_peer_per_hour, "new keys per peer per hour")
          ->check(Real(0, limits::kMaxOpsPerPeerHour, "a number of keys per peer-hour"));
      sub.add_option("--dht", *variant,
                     "hivemind: 160-bit ids, SHA-1 keys, full lists ping at most once a minute; hydra: 256-bit ids, "
                     "SHA-256 keys, a full list pings at once and keeps its old entries (docs/hydra.md §1)")
          ->check(CLI::IsMember({"hivemind", "hydra"}));
      sub.add_option("--bucket-size", *list_size, "entries per bucket, k (Hydra's M)")
          ->check(Count(2, 256, "a number of entries (a reply carries k contacts, at most 256)"));
      auto budget = std::make_shared<sim::RunBudget>();
      add_budget_options(sub, *budget);
      sub.add_flag("--json", *json, "print the result as JSON");
      return [config, json, budget, variant, list_size] {
        if (*variant == "hydra") config->dht = core::dht::hydra_dht_config(*list_size);
        else config->dht.bucket_size = *list_size;
        const double replacements = config->churn_per_hour * config->peers * config->hours;
        if (replacements > core::limits::kMaxDhtReplacements)
          throw core::InputError("command line", "--churn-per-hour, --peers, --hours",
                                 "churn x peers x hours = " + traces::format_plain(replacements) +
                                     " replacements: expected at most " +
                                     traces::format_plain(core::limits::kMaxDhtReplacements) +
                                     " (each takes a fresh address, allocated up front)");
        sim::check_budget(sim::dht_cost(*config), *budget, "command line",
                          "--peers, --hours, --gets-per-peer-hour, --puts-per-peer-hour");
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
