// swarmlab reach: what NAT traversal is worth (docs/trust.md §4). Trains one collaboration with
// client-mode peers four ways - client mode alone, relays, hole punching, both - and reports
// steps/h against client mode alone, the client peers' planned share of the aggregation and the
// bytes the relays forwarded.
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "cli/data_paths.h"
#include "scenarios/applicability.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/reachability_experiment.h"
#include "sim/experiments/run_cost.h"

namespace swarmlab::cli {
namespace {

struct ReachArgs {
  std::string scenario;  // empty: scenarios/nat/albert-70-client.json
  std::optional<double> hours;
  std::string out;
  bool json = false;
  sim::RunBudget budget;
};

const bool reach_registered = register_command(
    "reach",
    "NAT traversal: a collaboration with client-mode peers trained with client mode alone, relays, hole punching and "
    "both; steps/h, the clients' share of the aggregation, relayed bytes (docs/trust.md)",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ReachArgs>();
      sub.add_option("scenario", a->scenario, "scenario JSON file (default: scenarios/nat/albert-70-client.json)");
      sub.add_option("--hours", a->hours, "simulated time of each run (default: the scenario's training.duration_s)")
          ->check(Real(0.001, 1000, "hours"));
      sub.add_option("--out", a->out, "write reach.json here");
      sub.add_flag("--json", a->json, "print JSON");
      add_budget_options(sub, a->budget);
      return [a] {
        const std::string path =
            a->scenario.empty() ? find_data_dir("scenarios/nat") + "/albert-70-client.json" : a->scenario;
        const scenarios::Scenario sc = scenarios::load_scenario(path);
        scenarios::require_collaboration(sc, "reach");
        std::size_t clients = 0;
        for (const auto& p : sc.peers) clients += p.reachability == scenarios::Reachability::Client;
        if (clients == 0)
          throw core::InputError(sc.source, "peers", "expected at least one peer with reachability \"client\" (nothing to traverse)");
        sim::check_planner_size(sc, false, "swarmlab reach");  // every variant solves the planner
        // Four runs, with and without traversal: the costlier, counted four times.
        scenarios::Scenario relayed = sc;
        if (!relayed.nat_traversal) relayed.nat_traversal = scenarios::NatTraversalSpec{};
        const double duration_s = a->hours ? *a->hours * 3600 : sc.training.duration_s;
        const sim::TransportAssumptions transport;
        sim::RunCost cost = sim::training_cost(relayed, duration_s, sc.training.dpu, transport);
        if (sim::RunCost direct = sim::training_cost(sc, duration_s, sc.training.dpu, transport); direct.events > cost.events)
          cost = direct;
        cost.events *= 4;
        sim::check_budget(cost, a->budget, sc.source, "peers, workload, training.duration_s, training.metrics_interval_s");
        if (!a->out.empty()) prepare_out_dir(a->out, "--out");
        const sim::ReachabilityResult r =
            sim::run_reachability(sc, a->hours ? std::optional<double>(*a->hours * 3600) : std::nullopt);

        const double base = r.variants.front().training.steps_per_hour;
        nlohmann::ordered_json j;
        j["scenario"] = r.scenario;
        j["peers"] = r.peers;
        j["client_peers"] = r.clients;
        j["cone_clients"] = r.cone_clients;
        j["relays"] = r.relays;
        j["variants"] = nlohmann::ordered_json::array();
        for (const auto& v : r.variants)
          j["variants"].push_back({{"name", v.name},
                                   {"relays", v.relays},
                                   {"hole_punching", v.hole_punching},
                                   {"hours", v.training.duration_s / 3600},
                                   {"steps", v.training.steps},
                                   {"steps_per_hour", v.training.steps_per_hour},
                                   {"vs_client_mode_alone", base > 0 ? v.training.steps_per_hour / base : 0.0},
                                   {"mean_round_s", v.training.mean_round_s},
                                   {"planned_round_s", v.planned_round_s},
                                   {"client_share", v.client_share},
                                   {"relayed_gb", static_cast<double>(v.training.relayed_bytes) / 1e9},
                                   {"state_downloads", v.training.state_downloads}});
        if (!a->out.empty()) write_json_file(std::filesystem::path(a->out) / "reach.json", j);
        if (a->json) {
          std::cout << j.dump(2) << "\n";
          return kExitOk;
        }
        std::printf("%s: %zu peers, %zu in client mode (%zu behind cone NATs), %zu relays; %.2f h simulated each\n\n",
                    r.scenario.c_str(), r.peers, r.clients, r.cone_clients, r.relays,
                    r.variants.front().training.duration_s / 3600);
        std::printf("%-24s %9s %9s %12s %12s %12s %11s\n", "variant", "steps/h", "vs alone", "mean round", "planned",
                    "client share", "relayed GB");
        for (const auto& v : r.variants)
          std::printf("%-24s %9.1f %8.2fx %10.2f s %10.2f s %11.1f%% %11.2f\n", v.name.c_str(), v.training.steps_per_hour,
                      base > 0 ? v.training.steps_per_hour / base : 0.0, v.training.mean_round_s, v.planned_round_s,
                      100 * v.client_share, static_cast<double>(v.training.relayed_bytes) / 1e9);
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
