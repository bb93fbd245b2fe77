// swarmlab train: one scenario's collaborative training, simulated: steps/h, where the samples
// went, who was left out of steps, per-peer time and traffic.
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "analysis/training_report.h"
#include "cli/checks.h"
#include "cli/command.h"
#include "scenarios/applicability.h"
#include "sim/experiments/run_cost.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"
#include "sim/network/backend.h"

namespace swarmlab::cli {
namespace {

struct TrainArgs {
  std::string scenario;
  std::string backend = "flow";
  std::string coordination;  // empty: the scenario's
  double hours = 0;          // 0: the scenario's duration
  std::string out;
  bool no_replay = false;
  bool auth = false;
  bool json = false;
  sim::RunBudget budget;
};

const bool train_registered = register_command(
    "train", "Simulate one scenario's collaborative training: steps/h, sample ledger, per-peer metrics",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<TrainArgs>();
      sub.add_option("scenario", a->scenario, "scenario JSON file")->required();
      sub.add_option("--backend", a->backend, "network backend")
          ->check(CLI::IsMember(sim::available_backends()))
          ->capture_default_str();
      sub.add_option("--coordination", a->coordination, "oracle or dht (default: the scenario's)")
          ->check(CLI::IsMember(core::names_of(scenarios::kCoordinationNames)));
      sub.add_option("--hours", a->hours, "simulated time (default: the scenario's training.duration_s)")
          ->check(Real(0.001, 10000, "a number of hours"));
      sub.add_option("--out", a->out, "write <scenario>.json and CSVs (series, peers, steps) here");
      sub.add_flag("--no-replay", a->no_replay, "simulate every averaging round (no replay of identical rounds)");
      sub.add_flag("--auth", a->auth,
                   "allowlist authentication on (the scenario's \"auth\" costs, else the measured defaults; docs/trust.md)");
      sub.add_flag("--json", a->json, "print JSON");
      add_budget_options(sub, a->budget);
      return [a] {
        scenarios::Scenario sc = scenarios::load_scenario(a->scenario);
        scenarios::require_collaboration(sc, "train");
        if (a->auth && !sc.auth) sc.auth = scenarios::AuthSpec{};
        if (sc.averaging.strategy == core::averaging::Strategy::Planned) sim::check_planner_size(sc, false, "swarmlab train");
        sim::TrainingRunConfig cfg;
        cfg.backend = a->backend;
        cfg.replay_rounds = !a->no_replay;
        if (a->hours > 0) cfg.duration_s = a->hours * 3600;
        if (!a->coordination.empty()) cfg.coordination = *core::parse_name(scenarios::kCoordinationNames, a->coordination);
        sim::check_budget(sim::training_cost(sc, cfg.duration_s.value_or(sc.training.duration_s), sc.training.dpu, cfg.transport),
                          a->budget, sc.source, "peers, workload, training.duration_s, training.metrics_interval_s");
        if (!a->out.empty()) prepare_out_dir(a->out, "--out");
        const sim::TrainingRunResult r = sim::run_training(sc, cfg);
        if (!a->out.empty()) analysis::write_training_outputs(r, a->out, sc.name);
        if (a->json) {
          std::cout << analysis::to_json(r).dump(2) << "\n";
          return kExitOk;
        }
        std::printf("%s: %s, %s coordination%s, %.2f h simulated\n", sc.name.c_str(), r.mode.c_str(), r.coordination.c_str(),
                    r.authenticated ? ", authenticated" : "", r.duration_s / 3600);
        std::printf("steps %llu (%.1f/h), rounds %llu (%llu simulated, %llu replayed), mean round %.2f s\n",
                    static_cast<unsigned long long>(r.steps), r.steps_per_hour, static_cast<unsigned long long>(r.rounds),
                    static_cast<unsigned long long>(r.rounds_simulated), static_cast<unsigned long long>(r.rounds_replayed),
                    r.mean_round_s);
        std::printf("samples: computed %llu, in steps %llu, lost %llu, discarded %llu, pending %llu (%s)\n",
                    static_cast<unsigned long long>(r.ledger.computed), static_cast<unsigned long long>(r.ledger.in_steps),
                    static_cast<unsigned long long>(r.ledger.lost), static_cast<unsigned long long>(r.ledger.discarded),
                    static_cast<unsigned long long>(r.ledger.pending),
                    r.ledger.balanced() && r.ledger.pending == r.pending_check ? "balanced" : "UNBALANCED");
        std::printf("GPU utilisation %.0f%%, state downloads %llu (+%llu of missed steps), worst left-out share %.1f%%\n",
                    100 * r.mean_utilisation, static_cast<unsigned long long>(r.state_downloads),
                    static_cast<unsigned long long>(r.update_downloads), 100 * r.max_left_out_share);
        if (r.nat_traversal)
          std::printf("relays forwarded %.2f GB for client pairs (docs/trust.md §4)\n", static_cast<double>(r.relayed_bytes) / 1e9);
        // Shares of each peer's up time: computing, inside averaging rounds, and waiting with its
        // quota done for the slowest worker (DiLoCo; OpenDiLoCo reports the last two).
        std::printf("compute reward: %.0f VCU in all, against a reference of %.1f samples/s (docs/hydra.md §3)\n", r.vcu_total,
                    r.vcu_reference_sps);
        std::printf("\n%-16s %8s %8s %9s %9s %9s %9s %9s %9s %10s\n", "peer", "up_h", "util", "averaging", "waiting", "eligible",
                    "left_out", "downloads", "updates", "vcu");
        for (const auto& p : r.peers) {
          const double up = p.up_s > 0 ? p.up_s : 1;
          std::printf("%-16s %8.2f %7.0f%% %8.1f%% %8.1f%% %9llu %9llu %9llu %9llu %10.0f\n", p.name.c_str(), p.up_s / 3600,
                      100 * p.utilisation, 100 * p.averaging_s / up, 100 * p.wait_s / up,
                      static_cast<unsigned long long>(p.steps_eligible), static_cast<unsigned long long>(p.steps_left_out),
                      static_cast<unsigned long long>(p.state_downloads), static_cast<unsigned long long>(p.update_downloads),
                      p.vcu);
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
