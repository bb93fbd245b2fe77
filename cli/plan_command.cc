// swarmlab plan: the DeDLOC planner (docs/dedloc.md §2) on a scenario's peers.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/checks.h"
#include "cli/command.h"
#include "core/planner/planner.h"
#include "scenarios/applicability.h"
#include "sim/experiments/run_cost.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"

namespace swarmlab::cli {
namespace {

std::size_t relayed_pairs(const core::planner::PlannerInput& in) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < in.routes.size(); ++i)
    for (std::size_t j = i + 1; j < in.routes.size(); ++j) n += in.routes[i][j] >= 0;
  return n;
}

struct PlanArgs {
  std::string scenario;
  bool json = false;
  double max_gap = 0;
  int max_mips = 0;              // 0: the planner's default
  std::int64_t max_mip_nodes = 0;  // 0: the planner's default
  bool all_compute = false;
};

const bool plan_registered = register_command(
    "plan", "Solve the DeDLOC planner for a scenario: roles, fractions, steps/s, round time",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<PlanArgs>();
      sub.add_option("scenario", args->scenario, "scenario JSON file")->required();
      sub.add_flag("--json", args->json, "print JSON");
      sub.add_flag("--all-compute", args->all_compute,
                   "every compute-capable peer computes and the averaging rate alone is maximised: the plan "
                   "a round with strategy \"ours\" runs (default: the roles that maximise steps/s)");
      sub.add_option("--max-gap", args->max_gap,
                     "stop the roles search once no roles can beat the plan by more than this "
                     "relative gap (default 0: prove optimality)")
          ->check(Real(0, 1, "a relative gap"));
      // Budgets in MIPs and nodes, not seconds, so that a bounded solve is still the same on every
      // machine (core/planner/README.md, "The roles search", step 7).
      sub.add_option("--max-mips", args->max_mips,
                     "solve at most this many roles MIPs (default " +
                         std::to_string(core::planner::kDefaultMaxMips) +
                         "); when they run out, the roles are the best found and the plan reports "
                         "the gap it proved")
          ->check(Count(1, 1'000'000, "a number of MIPs"));
      sub.add_option("--max-mip-nodes", args->max_mip_nodes,
                     "explore at most this many branch-and-bound nodes per roles MIP (default " +
                         std::to_string(core::planner::kMipNodeScale) + "/n² within [" +
                         std::to_string(core::planner::kMinMipNodes) + ", " +
                         std::to_string(core::planner::kMaxMipNodes) +
                         "]); when they run out, as --max-mips")
          ->check(Count(1, 100'000'000, "a number of nodes"));
      return [args] {
        const scenarios::Scenario sc = scenarios::load_scenario(args->scenario);
        scenarios::require_collaboration(sc, "plan");
        sim::check_planner_size(sc, true, "swarmlab plan");
        const sim::TransportAssumptions transport;
        const core::planner::PlannerInput input = sim::planner_input(sc, transport);
        // The core never reads a clock, so the solve is timed here.
        const auto t0 = std::chrono::steady_clock::now();
        core::planner::PlannerOptions options;
        options.max_gap = args->max_gap;
        options.max_mips = args->max_mips;
        options.max_mip_nodes = args->max_mip_nodes;
        if (args->all_compute) {
          options.roles = core::planner::Roles::AllComputeCapable;
          options.objective = core::planner::Objective::AveragingOnly;
        }
        const core::planner::Plan plan = core::planner::solve(input, options);
        const double solve_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

        if (args->json) {
          nlohmann::ordered_json j;
          j["scenario"] = sc.name;
          j["steps_per_s"] = plan.steps_per_s;
          j["achievable_steps_per_s"] = plan.achievable_steps_per_s;
          // The LP's averaging rate may count returns no real split makes (a reducer returning
          // its span to some receivers only); the achievable rate is that of the fractions
          // below, and the round time is its inverse.
          j["averaging_rate_per_s"] = plan.averaging_rate;
          j["achievable_averaging_rate_per_s"] = plan.span_averaging_rate;
          j["round_time_s"] = plan.round_time_s;
          j["roles_exact"] = plan.roles_exact;
          j["roles_gap"] = plan.roles_gap;
          j["steps_per_s_bound"] = plan.steps_per_s_bound;
          j["solver"] = plan.solver;
          j["solve_time_ms"] = solve_ms;
          j["gradient_bits"] = input.gradient_bits;
          j["target_batch"] = input.target_batch;
          j["goodput_fraction"] = transport.goodput_fraction;
          j["peers"] = nlohmann::ordered_json::array();
          for (std::size_t i = 0; i < sc.peers.size(); ++i)
            j["peers"].push_back({{"name", sc.peers[i].name},
                                  {"computes", plan.peers[i].computes},
                                  {"fraction", plan.peers[i].fraction}});
          std::cout << j.dump(2) << "\n";
          return kExitOk;
        }
        std::printf("scenario      %s (%zu peers)\n", sc.name.c_str(), sc.peers.size());
        std::printf("steps_per_s   %.6g   (target batch %.0f samples; %.6g with these fractions)\n",
                    plan.steps_per_s, input.target_batch, plan.achievable_steps_per_s);
        std::printf("averaging     %.6g rounds/s achievable (LP: %.6g)\n", plan.span_averaging_rate,
                    plan.averaging_rate);
        std::printf("round_time_s  %.4g   (one gradient of %.0f bits, link goodput %.3f of nominal)\n",
                    plan.round_time_s, input.gradient_bits, transport.goodput_fraction);
        if (plan.roles_exact) {
          std::printf("roles         proven optimal\n");
        } else {
          std::printf("roles         within %.3g%% of optimal (no roles beat %.6g steps/s)\n",
                      100 * plan.roles_gap, plan.steps_per_s_bound);
        }
        std::printf("solver        %s, %.2f ms\n\n", plan.solver.c_str(), solve_ms);
        if (!input.relays.empty()) {
          // What the relays carry with these fractions (docs/trust.md §4).
          std::vector<bool> computes;
          std::vector<double> f;
          for (const auto& p : plan.peers) computes.push_back(p.computes), f.push_back(p.fraction);
          const std::vector<double> load = core::planner::relay_loads(input, computes, f);
          double relayed = 0;
          for (double l : load) relayed += l;
          std::printf("relays        %zu; they forward %.3g gradients per round in all (client pairs through a relay: %zu)\n",
                      input.relays.size(), relayed, relayed_pairs(input));
        }
        std::printf("%-28s %-8s %s\n", "peer", "computes", "fraction");
        for (std::size_t i = 0; i < sc.peers.size(); ++i)
          std::printf("%-28s %-8s %.6f\n", sc.peers[i].name.c_str(), plan.peers[i].computes ? "yes" : "no",
                      plan.peers[i].fraction);
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
