// swarmlab sim: run a scenario's averaging rounds on a simulator backend and write the results.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analysis/dht_report.h"
#include "cli/checks.h"
#include "cli/command.h"
#include "cli/progress.h"
#include "core/input_limits.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"
#include "sim/experiments/run_cost.h"
#include "sim/network/backend.h"
#include "sim/binding/chrome_trace.h"
#include "sim/experiments/dht_experiment.h"

namespace swarmlab::cli {
namespace {

struct SimArgs {
  std::string coordination = "oracle";
  std::string scenario;
  std::string out;
  std::string backend = "flow";
  std::string strategy;  // empty: the scenario's
  std::uint32_t rounds = 0;  // 0: the scenario's
  bool values = false;
  bool quiet = false;
  sim::RunBudget budget;
};

std::string csv_number(double v) {
  std::ostringstream s;
  s.precision(10);
  s << v;
  return s.str();
}

// A DHT-only scenario: the Kademlia scale experiment, written as results.json (what the scenario
// and seed determine) and run-info.json (wall-clock timings and the scenario path as typed).
int run_dht_scenario(const scenarios::Scenario& sc, const SimArgs& args) {
  sim::DhtExperimentConfig config;
  config.peers = sc.dht->peers;
  config.churn_per_hour = sc.dht->churn_per_hour;
  config.hours = sc.dht->hours;
  config.seed = sc.seed;
  sim::check_budget(sim::dht_cost(config), args.budget, sc.source, "dht");
  if (config.churn_per_hour * config.peers * config.hours > core::limits::kMaxDhtReplacements)
    throw core::InputError(sc.source, "dht",
                           "churn_per_hour x peers x hours = " + traces::format_plain(config.churn_per_hour * config.peers * config.hours) +
                               " replacements: expected at most " + traces::format_plain(core::limits::kMaxDhtReplacements) +
                               " (each takes a fresh address, allocated up front)");
  const std::filesystem::path out = out_dir_for(args.out, sc.name);
  const sim::DhtExperimentResult r = sim::run_dht_experiment(config);
  nlohmann::ordered_json j = analysis::to_json(r);
  j["scenario"] = sc.name;
  write_json_file(out / "results.json", j);
  nlohmann::ordered_json info = analysis::run_info_json(r);
  info["scenario_path"] = sc.source;
  write_json_file(out / "run-info.json", info);
  analysis::print_text(r, std::cout);
  std::cout << "wrote " << (out / "results.json").string() << " and " << (out / "run-info.json").string() << "\n";
  return kExitOk;
}

const bool sim_registered = register_command(
    "sim", "Simulate a scenario's averaging rounds; write results.json, rounds.csv and trace.json (Perfetto)",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<SimArgs>();
      sub.add_option("scenario", args->scenario, "scenario JSON file")->required();
      sub.add_option("--out", args->out, "output folder (default: out/<scenario name>)");
      sub.add_option("--backend", args->backend, "network backend")
          ->check(CLI::IsMember(sim::available_backends()))
          ->capture_default_str();
      sub.add_option("--strategy", args->strategy, "override the scenario's strategy")->check(CLI::IsMember(core::names_of(core::averaging::kStrategyNames)));
      sub.add_option("--rounds", args->rounds, "override the scenario's number of rounds")->check(Count(1, core::limits::kMaxRounds, "a number of rounds"));
      sub.add_option("--coordination", args->coordination,
                     "how rounds form: oracle (instantly, the simulator's global view) or dht (progress records and "
                     "matchmaking, as live peers do)")
          ->check(CLI::IsMember(core::names_of(scenarios::kCoordinationNames)))
          ->capture_default_str();
      sub.add_flag("--values", args->values, "carry real random vectors and check the averages (slower)");
      sub.add_flag("--quiet", args->quiet, "no progress bar");
      add_budget_options(sub, args->budget);
      return [args] {
        const scenarios::Scenario sc = scenarios::load_scenario(args->scenario);
        if (sc.dht) return run_dht_scenario(sc, *args);
        sim::AveragingRunConfig cfg;
        cfg.backend = args->backend;
        cfg.rounds = args->rounds ? args->rounds : sc.averaging.rounds;
        cfg.strategy = args->strategy.empty() ? sc.averaging.strategy
                                              : *core::parse_name(core::averaging::kStrategyNames, args->strategy);
        cfg.carry_values = args->values;
        cfg.coordination = *core::parse_name(scenarios::kCoordinationNames, args->coordination);
        // Refuse what cannot run here before running anything, and check --out first.
        if (cfg.strategy == core::averaging::Strategy::Planned) sim::check_planner_size(sc, false, "swarmlab sim");
        sim::check_budget(sim::averaging_cost(sc, cfg.strategy, cfg.rounds, cfg.replay_rounds, cfg.carry_values, true),
                          args->budget, sc.source, "peers, workload.parameters, averaging.part_bytes, averaging.rounds");
        const std::filesystem::path out = out_dir_for(args->out, sc.name);
        sim::ChromeTrace trace;
        cfg.trace = &trace;
        Progress progress("sim " + sc.name, args->quiet);
        cfg.on_round = [&](std::uint32_t done, std::uint32_t total) { progress.update(done, total); };
        const sim::AveragingRunResult r = sim::run_averaging(sc, cfg);

        nlohmann::ordered_json j;
        j["scenario"] = sc.name;
        j["backend"] = r.backend;
        j["strategy"] = r.strategy;
        j["seed"] = sc.seed;
        j["rounds"] = r.rounds.size();
        j["mean_round_s"] = r.mean_round_s;
        j["payload_bytes_per_gradient"] = r.payload_bytes_per_round;
        j["goodput_fraction"] = cfg.transport.goodput_fraction;
        j["events"] = r.events;
        j["peers"] = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < sc.peers.size(); ++i)
          j["peers"].push_back({{"name", sc.peers[i].name},
                                {"weight", r.roles.weights[i]},
                                {"fraction", r.roles.fractions[i]},
                                {"bytes_sent", r.bytes_sent[i]}});
        j["per_round"] = nlohmann::ordered_json::array();
        for (const auto& rr : r.rounds) {
          nlohmann::ordered_json x = {{"round", rr.round},
                                      {"started_s", rr.started_s},
                                      {"duration_s", rr.duration_s},
                                      {"participants", rr.participants},
                                      {"groups", rr.groups},
                                      {"failures", rr.failures},
                                      {"incomplete", rr.incomplete},
                                      {"fraction_averaged_min", rr.min_fraction_averaged},
                                      {"fraction_averaged_mean", rr.mean_fraction_averaged}};
          if (args->values) x["max_abs_error"] = rr.max_abs_error;
          j["per_round"].push_back(x);
        }
        write_json_file(out / "results.json", j);
        write_json_file(out / "run-info.json", {{"scenario_path", sc.source}});
        std::ofstream csv(out / "rounds.csv");
        csv << "round,started_s,duration_s,participants,groups,failures,incomplete,fraction_averaged_min,"
               "fraction_averaged_mean\n";
        for (const auto& rr : r.rounds)
          csv << rr.round << "," << csv_number(rr.started_s) << "," << csv_number(rr.duration_s) << ","
              << rr.participants << "," << rr.groups << "," << rr.failures << "," << rr.incomplete << ","
              << csv_number(rr.min_fraction_averaged) << "," << csv_number(rr.mean_fraction_averaged) << "\n";
        std::ofstream tf(out / "trace.json");
        trace.write(tf);
        std::cout << sc.name << ": " << r.strategy << " on " << r.backend << ", " << r.rounds.size()
                  << " rounds, mean " << r.mean_round_s << " s per round\n"
                  << "wrote " << (out / "results.json").string() << ", " << (out / "rounds.csv").string() << ", "
                  << (out / "trace.json").string() << " (open in https://ui.perfetto.dev)\n";
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
