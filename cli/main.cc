// swarmlab: one executable, one subcommand per task (see cli/command.h).
#include <algorithm>
#include <exception>
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "cli/input_error.h"

namespace swarmlab::cli {
std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}
}  // namespace swarmlab::cli

int main(int argc, char** argv) {
  using namespace swarmlab::cli;
  CLI::App app{"swarmlab: simulate and run collaborative deep learning"};
  app.require_subcommand(1);
  // Argument errors read like every other bad input: source, location (the option), expectation.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return "swarmlab: bad input: command line: " + std::string(e.what()) + "\n";
  });
  auto& commands = registry();
  std::sort(commands.begin(), commands.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  std::vector<std::function<int()>> actions(commands.size());
  std::vector<CLI::App*> subs;
  for (std::size_t i = 0; i < commands.size(); ++i) {
    CLI::App* sub = app.add_subcommand(commands[i].name, commands[i].help);
    actions[i] = commands[i].setup(*sub);
    subs.push_back(sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  try {
    for (std::size_t i = 0; i < subs.size(); ++i)
      if (subs[i]->parsed()) return actions[i]();
  } catch (const std::exception& e) {
    return report_error(e);
  }
  return kExitFailure;
}
