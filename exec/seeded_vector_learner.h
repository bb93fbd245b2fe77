#pragma once
// The learner of a live averaging-only run (core/training/learner.h): no model, a vector whose
// every element is a pure function of (seed, round, peer, index) (exec/gradient_values.h), so any
// peer can recompute every member's vector and check the average it ends with. Each peer contributes
// one sample per round, at once (the peer's quota of 1). The host keys the next round's vector
// (set_round) when the round starts, before the peer hands the vector over.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/env.h"
#include "core/training/learner.h"

namespace swarmlab::exec {

class SeededVectorLearner final : public core::training::Learner {
 public:
  SeededVectorLearner(core::Environment& env, std::uint64_t seed, std::uint64_t length);
  ~SeededVectorLearner() override;

  // The round whose vector begin_averaging() hands over next.
  void set_round(std::uint64_t round_id) { round_ = round_id; }
  // The vector after the last round (averaged values where averaging succeeded).
  const std::vector<float>& values() const { return values_; }

  std::uint64_t parameter_count() const override { return length_; }
  std::uint64_t state_bytes() const override { return 0; }
  bool has_values() const override { return true; }
  void compute(std::uint64_t samples, std::function<void()> done) override;
  double compute_seconds() const override { return 0; }
  std::span<float> begin_averaging(std::uint64_t samples) override;
  void apply_averaged() override {}
  void discard() override {}
  std::vector<std::uint8_t> export_state() const override { return {}; }
  void import_state(std::span<const std::uint8_t> bytes) override;
  std::optional<double> take_loss() override { return std::nullopt; }

 private:
  core::Environment& env_;
  std::uint64_t seed_, length_;
  std::uint64_t round_ = 0;
  std::vector<float> values_;
  core::TimerHandle job_ = 0;
};

}  // namespace swarmlab::exec
