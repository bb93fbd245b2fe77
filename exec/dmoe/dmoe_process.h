#pragma once
// The two kinds of process of a live Learning@home run (docs/learning-at-home.md §10), usually
// started by `swarmlab launch <dmoe scenario>` (exec/dmoe/dmoe_launch.h):
//
// - an expert runtime (`swarmlab dmoe-runtime`): the core's ExpertRuntime serving libtorch experts
//   (learn/torch/torch_dmoe.h), announcing them in the DHT (ExpertAnnouncer), storing their
//   checkpoints there and taking over the experts of the next runtime when it disappears
//   (ExpertKeeper). It serves until SIGTERM. JSON lines: {"event":"start"}, {"event":"stats"}
//   every second, {"event":"exit"}, each with the runtime's counters.
// - a trainer (`swarmlab dmoe-trainer`): a stem, gates and head of its own
//   (TorchDmoeTrainerModel) around the scenario's DMoE layers (core DmoeLayer: beam search over the
//   DHT, the mixture over the chosen experts' answers), training on Fashion-MNIST asynchronously for
//   the scenario's duration, with an exponential pause of the scenario's mean after every expert
//   call. JSON lines: {"event":"batch"} per batch (loss, accuracy, experts that answered, dropped
//   so far), {"event":"eval"} (the first trainer: test accuracy every eval_every batches, and on
//   the whole test set at the end), {"event":"exit"} with its counters.
//
// Both libtorch processes live in `swarmlab-train` (exec/train/torch_process_forward.cc).
#include <cstdint>
#include <ostream>
#include <string>

#include "exec/live_host.h"
#include "learn/fashion_mnist.h"
#include "scenarios/dmoe_live.h"

namespace swarmlab::exec {

struct DmoeProcessConfig {
  LiveHostConfig host;                // host.id: the peer (runtimes first, then trainers)
  scenarios::DmoeLiveScenario scenario;
  std::string data_dir = learn::kFashionMnistDir;
  int threads = 1;                    // torch intra-op threads
  std::string device = "auto";        // auto, cpu, cuda
};

// Serve until SIGTERM (then leave cleanly, exit 0). std::invalid_argument when host.id is not a runtime.
int run_expert_runtime(const DmoeProcessConfig& config, std::ostream& out, std::ostream& log);
// Train for the scenario's duration; 0, or 1 when no batch ever completed. Throws core::InputError
// for a dataset that cannot be read, std::invalid_argument when host.id is not a trainer.
int run_dmoe_trainer(const DmoeProcessConfig& config, std::ostream& out, std::ostream& log);

}  // namespace swarmlab::exec
