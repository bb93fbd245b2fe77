// swarmlab dmoe-runtime: one expert runtime of a live Learning@home run (usually started by `launch`).
#include <iostream>

#include "cli/command.h"
#include "cli/dmoe_process_args.h"

namespace swarmlab::cli {
namespace {

const bool dmoe_runtime_registered = register_command(
    "dmoe-runtime", "Serve a layer's experts (libtorch) to DMoE trainers, announce them in the DHT, take over lost ones",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<DmoeProcessArgs>();
      add_dmoe_process_options(sub, *a);
      return [a] { return exec::run_expert_runtime(dmoe_process_config(*a), std::cout, std::cerr); };
    });

}  // namespace
}  // namespace swarmlab::cli
