#include "cli/sweep_report.h"

#include <filesystem>

#include "cli/python_script.h"

namespace swarmlab::cli {

ReportOutcome write_sweep_report(const std::vector<std::string>& sweep_dirs, const std::string& compare_dir,
                                 const std::string& out_dir) {
  std::vector<std::string> args = {"--out", out_dir};
  for (const auto& d : sweep_dirs) args.insert(args.end(), {"--sweep", d});
  if (!compare_dir.empty()) args.insert(args.end(), {"--compare", compare_dir});
  const int code = run_analysis_script("sweep_report.py", args);
  if (code == 0) return {true, "wrote " + (std::filesystem::path(out_dir) / "report.html").string() + " and its PNG plots"};
  if (code == 3) return {false, "plots skipped: python3 with matplotlib is not available (setup.sh installs python3-matplotlib)"};
  if (code == 127) return {false, "plots skipped: python3 is not available"};
  return {false, "plots failed: analysis/sweep_report.py exited with status " + std::to_string(code)};
}

}  // namespace swarmlab::cli
