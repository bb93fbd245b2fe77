#pragma once
// A learner that only takes time: each compute call is Environment::compute at the peer's speed in
// the memory world. It holds no values, so averaging moves no numbers (a virtual state of its own
// parameter count).
#include <cstdint>
#include <functional>

#include "core/env.h"
#include "core/training/learner.h"

namespace swarmlab::core::testing {

class TimedLearner final : public training::Learner {
 public:
  explicit TimedLearner(Environment& env, std::uint64_t parameters = 1) : env_(env), parameters_(parameters) {}
  std::uint64_t parameter_count() const override { return parameters_; }
  std::uint64_t state_bytes() const override { return 4 * parameters_; }
  bool has_values() const override { return false; }
  void compute(std::uint64_t samples, std::function<void()> done) override {
    const Seconds start = env_.now();
    env_.compute(samples, [this, start, done = std::move(done)] {
      busy_ += env_.now() - start;
      done();
    });
  }
  double compute_seconds() const override { return busy_; }
  std::span<float> begin_averaging(std::uint64_t) override { return {}; }
  void apply_averaged() override {}
  void discard() override {}
  std::vector<std::uint8_t> export_state() const override { return {}; }
  void import_state(std::span<const std::uint8_t>) override {}
  std::optional<double> take_loss() override { return std::nullopt; }

 private:
  Environment& env_;
  std::uint64_t parameters_;
  double busy_ = 0;
};

}  // namespace swarmlab::core::testing
