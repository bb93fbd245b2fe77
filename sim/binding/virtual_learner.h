#pragma once
// The simulator's learner (core/training/learner.h): a model of `parameters` numbers that trains
// at the speed of the peer's simulated device (Environment::compute), or instantly for
// averaging-only runs.
//
// Sizes only by default: nothing is averaged but byte counts, and a state download moves
// state_bytes virtual bytes. With `values` the averaged vector is real: `values.fill` writes this
// peer's contribution when a round begins and `values.averaged` sees the result when it ends (value
// checks against the exact weighted average); the state is then that vector and the step.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "core/env.h"
#include "core/training/learner.h"

namespace swarmlab::sim {

struct VirtualLearnerOptions {
  std::uint64_t parameters = 0;
  std::uint64_t state_bytes = 0;  // what a state download moves (sizes only)
  bool instant = false;           // compute takes no time
  struct Values {
    std::function<void(std::span<float>)> fill;
    std::function<void(std::span<const float>)> averaged;
  };
  std::optional<Values> values;
};

class VirtualLearner final : public core::training::Learner {
 public:
  VirtualLearner(core::Environment& env, VirtualLearnerOptions options);
  ~VirtualLearner() override;

  std::uint64_t parameter_count() const override { return options_.parameters; }
  std::uint64_t state_bytes() const override;
  bool has_values() const override { return options_.values.has_value(); }
  void compute(std::uint64_t samples, std::function<void()> done) override;
  double compute_seconds() const override;
  std::span<float> begin_averaging(std::uint64_t samples) override;
  void apply_averaged() override;
  void discard() override {}
  std::vector<std::uint8_t> export_state() const override;
  void import_state(std::span<const std::uint8_t> bytes) override;
  std::optional<double> take_loss() override { return std::nullopt; }

 private:
  core::Environment& env_;
  VirtualLearnerOptions options_;
  core::TimerHandle job_ = 0;
  std::function<void()> done_;  // the running job's callback
  core::Seconds job_started_ = 0, busy_ = 0;
  std::vector<float> buffer_;  // the vector being averaged (values only)
  std::uint64_t steps_ = 0;
};

}  // namespace swarmlab::sim
