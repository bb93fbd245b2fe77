// swarmlab compare: how a change (a strategy, a setting) moves steps/h or round time, composition
// by composition, with confidence intervals; two sweeps, or one sweep with an axis to compare.
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/sweep_report.h"
#include "sweep/compare.h"

namespace swarmlab::cli {
namespace {

struct CompareArgs {
  std::vector<std::string> sweeps;
  sweep::CompareOptions options;
  std::string out;
  bool no_report = false;
};

const bool compare_registered = register_command(
    "compare",
    "Compare two sweeps (or two values of one sweep's axis) per composition: mean change over seeds with a 95% CI, "
    "share that helps, worst case; writes compare.csv, compare.json and report.html",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CompareArgs>();
      sub.add_option("sweeps", a->sweeps, "a sweep's output folder (baseline), and optionally a second (candidate)")
          ->required()
          ->expected(1, 2);
      sub.add_option("--metric", a->options.metric, "metric to compare (default: mean_round_s for averaging, "
                                                    "steps_per_hour for training)");
      sub.add_option("--axis", a->options.axis, "one sweep: the axis whose values are compared (default: strategy)");
      sub.add_option("--baseline", a->options.baseline, "one sweep: the value compared against (default: the axis's first)");
      sub.add_option("--candidate", a->options.candidate, "one sweep: the other value (default: the axis's second)");
      sub.add_option("--out", a->out, "output folder (default: <first sweep>/compare or <first sweep>/compare-<second's name>)");
      sub.add_flag("--no-report", a->no_report, "write no plots and no report.html");
      return [a]() -> int {
        const sweep::ResultTable first = sweep::load_result_table(a->sweeps[0]);
        std::optional<sweep::ResultTable> second;
        if (a->sweeps.size() == 2) {
          for (const auto* flag : {&a->options.axis, &a->options.baseline, &a->options.candidate})
            if (!flag->empty())
              throw std::invalid_argument("--axis, --baseline and --candidate compare within one sweep: give one folder");
          second = sweep::load_result_table(a->sweeps[1]);
        }
        const sweep::Comparison c =
            second ? sweep::compare_sweeps(first, *second, a->options) : sweep::compare_within(first, a->options);
        std::string out = a->out;
        if (out.empty())
          out = (std::filesystem::path(a->sweeps[0]) / (second ? "compare-" + second->name : std::string("compare"))).string();
        sweep::write_comparison(c, out);
        std::cout << sweep::describe(c) << "wrote " << out << "/compare.csv, compare.json\n";
        if (!a->no_report) {
          std::vector<std::string> dirs = {a->sweeps[0]};
          if (second) dirs.push_back(a->sweeps[1]);
          std::cout << write_sweep_report(dirs, out, out).message << "\n";
        }
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
