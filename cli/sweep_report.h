#pragma once
// Runs analysis/sweep_report.py (matplotlib): PNG plots and a self-contained report.html for
// sweeps and a comparison.
#include <string>
#include <vector>

namespace swarmlab::cli {

struct ReportOutcome {
  bool written = false;
  std::string message;  // what was written, or why not
};

ReportOutcome write_sweep_report(const std::vector<std::string>& sweep_dirs, const std::string& compare_dir,
                                 const std::string& out_dir);

}  // namespace swarmlab::cli
