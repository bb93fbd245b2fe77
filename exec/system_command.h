#pragma once
// Runs an external program (ip, tc) with an argument vector - no shell, so names and numbers are
// never re-parsed - and captures what it prints.
#include <string>
#include <vector>

namespace swarmlab::exec {

struct CommandResult {
  int exit_code = -1;  // -1: could not be started or was killed
  std::string output;  // stdout and stderr together
  bool ok() const { return exit_code == 0; }
};

CommandResult run_command(const std::vector<std::string>& argv);
// The full path of `program` from PATH, then /usr/sbin and /sbin (where ip and tc live, and which
// a non-root PATH may lack); empty when not found.
std::string find_program(const std::string& program);
// "ip link add ..." for messages.
std::string join_command(const std::vector<std::string>& argv);

}  // namespace swarmlab::exec
