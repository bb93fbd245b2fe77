// swarmlab crossval: the fluid model against packet-level TCP (ns-3) on a fixed suite.
#include <iostream>

#include "cli/command.h"
#include "cli/data_paths.h"
#include "cli/progress.h"
#include "sim/experiments/crossval.h"

namespace swarmlab::cli {
namespace {

struct CrossvalArgs {
  bool json = false;
  bool quiet = false;
};

const bool crossval_registered = register_command(
    "crossval", "Cross-validate the fluid network model against packet-level TCP (ns-3) on a fixed suite",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<CrossvalArgs>();
      sub.add_flag("--json", args->json, "print JSON");
      sub.add_flag("--quiet", args->quiet, "no progress bar");
      return [args] {
        sim::CrossvalOptions options;
        options.scenario_dir = find_data_dir("scenarios/table1");
        Progress progress("crossval", args->quiet);
        options.on_case = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
        const sim::CrossvalReport report = sim::run_crossval(options);
        if (args->json)
          std::cout << sim::to_json(report).dump(2) << "\n";
        else
          std::cout << sim::to_text(report);
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
