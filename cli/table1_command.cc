// swarmlab table1: DeDLOC Table 1 reproduced on a simulator backend.
#include <iostream>

#include "analysis/table1.h"
#include "cli/checks.h"
#include "cli/command.h"
#include "cli/data_paths.h"
#include "cli/progress.h"
#include "sim/network/backend.h"

namespace swarmlab::cli {
namespace {

struct Table1Args {
  std::string backend = "flow";
  std::uint32_t rounds = 3;
  std::uint32_t warmup = 1;
  std::string scenario_dir;
  bool json = false;
  bool quiet = false;
  bool hd = false;
};

const bool table1_registered = register_command(
    "table1", "Reproduce DeDLOC Table 1 (ResNet-50 averaging time, AR / PS / Ours, setups A-D)",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<Table1Args>();
      sub.add_option("--backend", args->backend, "network backend")
          ->check(CLI::IsMember(sim::available_backends()))
          ->capture_default_str();
      sub.add_option("--rounds", args->rounds, "averaging rounds per cell (the paper averages 100; simulated "
                                               "rounds of a static collaboration are identical)")
          ->check(Count(1, 100000, "a number of rounds"))
          ->capture_default_str();
      sub.add_option("--warmup", args->warmup, "rounds run first and left out of the mean (connection setup, "
                                               "TCP slow start on ns3)")
          ->check(Count(0, 1000, "a number of rounds"))
          ->capture_default_str();
      sub.add_option("--scenarios", args->scenario_dir, "folder holding A.json..D.json (default: scenarios/table1)");
      sub.add_flag("--hd", args->hd, "add a column: Hydra's halving-doubling all-reduce on the same setups (strategy hd)");
      sub.add_flag("--json", args->json, "print JSON");
      sub.add_flag("--quiet", args->quiet, "no progress bar");
      auto budget = std::make_shared<sim::RunBudget>();
      add_budget_options(sub, *budget);
      return [args, budget] {
        analysis::Table1Options options;
        options.budget = *budget;
        options.backend = args->backend;
        options.rounds = args->rounds;
        options.warmup_rounds = args->warmup;
        options.halving_doubling = args->hd;
        options.scenario_dir = args->scenario_dir.empty() ? find_data_dir("scenarios/table1") : args->scenario_dir;
        Progress progress("table1", args->quiet);
        options.on_cell = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
        const analysis::Table1Report report = analysis::run_table1(options);
        if (args->json)
          std::cout << analysis::to_json(report).dump(2) << "\n";
        else
          std::cout << analysis::to_text(report);
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
