// swarmlab plan: the DeDLOC planner (docs/dedloc.md §2) on a scenario's peers.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"

namespace swarmlab::cli {
namespace {

struct PlanArgs {
  std::string scenario;
  bool json = false;
};

const bool registered = register_command(
    "plan", "Solve the DeDLOC planner for a scenario: roles, fractions, steps/s, round time",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<PlanArgs>();
      sub.add_option("scenario", args->scenario, "scenario JSON file")->required();
      sub.add_flag("--json", args->json, "print JSON");
      return [args] {
        const scenarios::Scenario sc = scenarios::load_scenario(args->scenario);
        const sim::TransportAssumptions transport;
        const core::planner::PlannerInput input = sim::planner_input(sc, transport);
        // The core never reads a clock, so the solve is timed here.
        const auto t0 = std::chrono::steady_clock::now();
        const core::planner::Plan plan = core::planner::solve(input);
        const double solve_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

        if (args->json) {
          nlohmann::ordered_json j;
          j["scenario"] = sc.name;
          j["steps_per_s"] = plan.steps_per_s;
          j["round_time_s"] = plan.round_time_s;
          j["averaging_rate_per_s"] = plan.averaging_rate;
          j["solver"] = plan.solver;
          j["roles_exact"] = plan.roles_exact;
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
        std::printf("steps_per_s   %.6g   (target batch %.0f samples)\n", plan.steps_per_s, input.target_batch);
        std::printf("round_time_s  %.4g   (one gradient of %.0f bits, link goodput %.3f of nominal)\n",
                    plan.round_time_s, input.gradient_bits, transport.goodput_fraction);
        std::printf("solver        %s%s, %.2f ms\n\n", plan.solver.c_str(), plan.roles_exact ? "" : " (roles not proven optimal)",
                    solve_ms);
        std::printf("%-28s %-8s %s\n", "peer", "computes", "fraction");
        for (std::size_t i = 0; i < sc.peers.size(); ++i)
          std::printf("%-28s %-8s %.6f\n", sc.peers[i].name.c_str(), plan.peers[i].computes ? "yes" : "no",
                      plan.peers[i].fraction);
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
