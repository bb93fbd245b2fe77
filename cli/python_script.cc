#include "cli/python_script.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli/data_paths.h"

namespace swarmlab::cli {

namespace {

std::string python() {
  if (const char* p = std::getenv("SWARMLAB_PYTHON"); p && *p) return p;
  std::error_code ec;
  if (std::filesystem::exists("/usr/bin/python3", ec)) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

int run_analysis_script(const std::string& script, const std::vector<std::string>& args) {
  std::vector<std::string> all = {python(), find_data_dir("analysis") + "/" + script};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace swarmlab::cli
