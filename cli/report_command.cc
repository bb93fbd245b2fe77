// swarmlab report: plots and a self-contained HTML report of a sweep (analysis/sweep_report.py).
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/sweep_report.h"
#include "sweep/result_table.h"

namespace swarmlab::cli {
namespace {

struct ReportArgs {
  std::vector<std::string> sweeps;
  std::string out;
};

const bool report_registered = register_command(
    "report", "Plots (metric against each axis, heatmaps over two axes) and report.html for one or more sweeps",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ReportArgs>();
      sub.add_option("sweeps", a->sweeps, "sweep output folders")->required();
      sub.add_option("--out", a->out, "output folder (default: <first sweep>/report)");
      return [a]() -> int {
        for (const auto& d : a->sweeps) sweep::load_result_table(d);  // bad folders: exit 2 with the reason
        const std::string out = a->out.empty() ? (std::filesystem::path(a->sweeps[0]) / "report").string() : a->out;
        const ReportOutcome r = write_sweep_report(a->sweeps, "", out);
        std::cout << r.message << "\n";
        return r.written ? kExitOk : kExitFailure;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
