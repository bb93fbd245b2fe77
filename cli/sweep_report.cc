#include "cli/sweep_report.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/data_paths.h"

namespace swarmlab::cli {

namespace {

// SWARMLAB_PYTHON if set; else Debian's interpreter, which has python3-matplotlib from setup.sh
// (a python3 found first on PATH, e.g. pyenv's, usually lacks it); else python3 from PATH.
std::string python() {
  if (const char* p = std::getenv("SWARMLAB_PYTHON"); p && *p) return p;
  std::error_code ec;
  if (std::filesystem::exists("/usr/bin/python3", ec)) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

ReportOutcome write_sweep_report(const std::vector<std::string>& sweep_dirs, const std::string& compare_dir,
                                 const std::string& out_dir) {
  std::vector<std::string> args = {python(), find_data_dir("analysis") + "/sweep_report.py", "--out", out_dir};
  for (const auto& d : sweep_dirs) args.insert(args.end(), {"--sweep", d});
  if (!compare_dir.empty()) args.insert(args.end(), {"--compare", compare_dir});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return {false, "plots skipped: cannot start python3"};
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) return {true, "wrote " + (std::filesystem::path(out_dir) / "report.html").string() + " and its PNG plots"};
  if (code == 3) return {false, "plots skipped: python3 with matplotlib is not available (setup.sh installs python3-matplotlib)"};
  if (code == 127) return {false, "plots skipped: python3 is not available"};
  return {false, "plots failed: analysis/sweep_report.py exited with status " + std::to_string(code)};
}

}  // namespace swarmlab::cli
