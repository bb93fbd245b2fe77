#pragma once
// Byzantine-robust averaging, measured (docs/trust.md §3): a scenario's collaboration trains a
// small real model in the simulator while some of its peers attack (sim/experiments/attacks.h),
// with or without CenteredClip in every reducer. Every peer runs the core's CollaborativePeer
// unchanged; the experiment supplies each peer's real gradient (the learner's values), applies
// the averaged vector as an SGD step, and keeps the books: how far each round's average landed
// from the mean of the honest contributions, and the honest peers' training loss.
//
// The model comes from the caller (the CLI binds learn/softmax_regression.h), so the simulator
// itself holds no dataset.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/averaging/centered_clip.h"
#include "scenarios/scenario.h"
#include "sim/experiments/attacks.h"

namespace swarmlab::sim {

// A model that gives real gradients.
struct RobustnessModel {
  std::vector<float> initial;  // the parameters every peer starts from
  std::uint32_t samples = 0;   // training samples; indices into them
  // Mean gradient over `indices` at `params`, into `gradient`; returns the mean loss.
  std::function<double(std::span<const float> params, std::span<const std::uint32_t> indices, std::span<float> gradient)>
      gradient;
};

struct RobustnessSetup {
  std::size_t attackers = 0;  // the scenario's last peers attack
  Attack attack = Attack::SignFlip;
  std::optional<core::averaging::CenteredClip> clip;  // overrides the scenario's averaging.centered_clip
  bool no_clip = false;                               // average with the mean even if the scenario clips
  std::uint64_t steps = 100;  // honest optimizer steps to run (the run also stops at training.duration_s)
  double learning_rate = 0.1;
};

struct RobustnessResult {
  std::uint64_t steps = 0;  // the first honest peer's steps
  // ‖average − honest mean‖ / ‖honest mean‖ per round the first honest peer finished (honest mean:
  // the weighted mean of the honest contributions to that round).
  std::vector<double> relative_distance;
  std::vector<double> train_loss;  // per round: the honest contributions' mean batch loss
  std::vector<float> parameters;   // the first honest peer's parameters at the end
  std::uint64_t clipped = 0;       // contributions clipped, over every reducer and round
  double mean_relative_distance() const;
};

// Throws std::invalid_argument when the scenario does not fit the model (workload.parameters),
// or there are not more honest peers than attackers.
RobustnessResult run_robustness(const scenarios::Scenario& scenario, const RobustnessModel& model,
                                const RobustnessSetup& setup);

}  // namespace swarmlab::sim
