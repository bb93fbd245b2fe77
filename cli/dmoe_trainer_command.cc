// swarmlab dmoe-trainer: one asynchronous trainer of a live Learning@home run (usually started by `launch`).
#include <iostream>

#include "cli/command.h"
#include "cli/dmoe_process_args.h"

namespace swarmlab::cli {
namespace {

const bool dmoe_trainer_registered = register_command(
    "dmoe-trainer", "Train a model with DMoE layers on Fashion-MNIST against the run's expert runtimes",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<DmoeProcessArgs>();
      add_dmoe_process_options(sub, *a);
      return [a] { return exec::run_dmoe_trainer(dmoe_process_config(*a), std::cout, std::cerr); };
    });

}  // namespace
}  // namespace swarmlab::cli
