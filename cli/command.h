#pragma once
// Subcommand registry. Each cli/<name>_command.cc registers itself at static-initialisation time
// (`const bool <name>_registered = register_command(...)`: the files are compiled in batches, so
// the name is the command's), so adding a subcommand touches no other file.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace swarmlab::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;    // the run itself failed
inline constexpr int kExitBadInput = 2;   // malformed scenario, trace or argument

// Configures `sub` (options, flags) and returns the action to run when it is chosen.
using CommandSetup = std::function<std::function<int()>(CLI::App& sub)>;

struct Command {
  std::string name;
  std::string help;
  CommandSetup setup;
};

std::vector<Command>& registry();

inline bool register_command(std::string name, std::string help, CommandSetup setup) {
  registry().push_back({std::move(name), std::move(help), std::move(setup)});
  return true;
}

}  // namespace swarmlab::cli
