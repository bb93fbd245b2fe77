#pragma once
// Hydra's distribution policy (docs/hydra.md §6) on libtorch: a small network reads what is known of
// a composition (compute, memory, links, latencies) and chooses, for every device, a share level;
// the caller turns levels into mini-batch sizes and measures the step they give. It is trained with
// REINFORCE: reward = -(step seconds / the task's reference seconds), with an exponential moving
// average of each task's rewards as the baseline.
//
// The policy: an MLP (features -> hidden -> hidden -> devices x levels logits, tanh), one
// independent categorical distribution per device. Each update samples `samples` level vectors
// per task, measures each, and takes one Adam step on
//   -mean((reward - baseline) * log pi(levels)) - entropy_weight * mean entropy.
// It runs on the CPU: the network has a few tens of thousands of parameters and reads one
// composition at a time, so a GPU would only add transfers. Seeded and single-threaded, so a run
// is a function of its configuration.
//
// ABI-neutral header (learn/README.md): the .cc alone includes libtorch. The `swarmlab` executable
// has no libtorch; there this call re-executes the command as `swarmlab-train`
// (exec/train/torch_process_forward.cc).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace swarmlab::learn {

struct PlacementTask {
  std::string name;
  std::vector<double> features;  // the same length for every task
  std::size_t devices = 0;       // the same for every task
  // Seconds of the step these per-device levels (each in [0, levels)) give.
  std::function<double(const std::vector<std::uint32_t>&)> step_seconds;
  double reference_s = 1;  // rewards are relative to it, so fast and slow tasks weigh alike
};

struct PolicyTrainingConfig {
  std::uint32_t updates = 500;  // Adam steps
  std::uint32_t samples = 64;   // level vectors drawn per task and update
  std::uint32_t levels = 9;     // share levels per device: 0 (left out) .. levels-1
  std::uint32_t hidden = 128;
  double learning_rate = 3e-3;
  double baseline_decay = 0.9;  // EMA: b <- decay * b + (1 - decay) * mean reward
  double entropy_weight = 0.01;
  std::uint64_t seed = 1;
  std::function<void(std::uint32_t)> on_update;  // after each update, with the updates done (progress)
};

struct PolicyCurvePoint {
  std::uint32_t update = 0;
  std::vector<double> mean_step_s;    // per task: the mean over this update's samples
  std::vector<double> greedy_step_s;  // per task: the most likely levels' step, after the update
};

struct PolicyTrainingResult {
  std::vector<PolicyCurvePoint> curve;  // one point per update
  std::vector<std::vector<std::uint32_t>> greedy_levels;  // per task, after training (their step: curve.back())
  std::size_t parameters = 0;                             // of the network
};

// Throws std::invalid_argument when the tasks disagree in shape, or the configuration is empty.
PolicyTrainingResult train_placement_policy(const std::vector<PlacementTask>& tasks, const PolicyTrainingConfig& config);

}  // namespace swarmlab::learn
