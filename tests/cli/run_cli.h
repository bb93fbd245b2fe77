#pragma once
// Runs the built swarmlab executable (or any command line) for end-to-end tests.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace swarmlab::cli::testing {

struct CliResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr together when merge_stderr
};

// Runs a shell command line; what it writes to stdout is the result's `out`.
inline CliResult run_command(const std::string& cmd) {
  CliResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline CliResult run_swarmlab(const std::string& args, bool merge_stderr = false) {
  // Appended rather than added: GCC 12 warns falsely about "literal" + std::string once inlined.
  return run_command(std::string(SWARMLAB_BINARY_DIR)
                         .append("/swarmlab ")
                         .append(args)
                         .append(merge_stderr ? " 2>&1" : " 2>/dev/null"));
}

}  // namespace swarmlab::cli::testing
