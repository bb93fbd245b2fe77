#pragma once
// A learner that computes no faster than a given device (core/training/learner.h decorator): a
// micro-batch of n samples starts no earlier than the previous one's start plus that one's
// n / samples_per_second. It lets one machine host a collaboration of unequal peers (a scenario's
// compute speeds, below what the machine can do) without touching the protocol or the arithmetic:
// everything but the start times is the wrapped learner's. Pacing holds the start, never the
// completion, so the wrapped learner and the peer always agree on which micro-batches are done.
#include <cstdint>
#include <memory>

#include "core/env.h"
#include "core/training/learner.h"

namespace swarmlab::exec {

class PacedLearner final : public core::training::Learner {
 public:
  // Throws std::invalid_argument unless samples_per_second > 0.
  PacedLearner(core::Environment& env, std::unique_ptr<core::training::Learner> inner, double samples_per_second);
  ~PacedLearner() override;

  core::training::Learner& inner() { return *inner_; }

  std::uint64_t parameter_count() const override { return inner_->parameter_count(); }
  std::uint64_t state_bytes() const override { return inner_->state_bytes(); }
  bool has_values() const override { return inner_->has_values(); }
  void compute(std::uint64_t samples, std::function<void()> done) override;
  // The paced device's busy time: the wrapped learner's, or longer where pacing held work back.
  double compute_seconds() const override;
  std::span<float> begin_averaging(std::uint64_t samples) override { return inner_->begin_averaging(samples); }
  void apply_averaged() override { inner_->apply_averaged(); }
  void discard() override { inner_->discard(); }
  std::vector<std::uint8_t> export_state() const override { return inner_->export_state(); }
  void import_state(std::span<const std::uint8_t> bytes) override { inner_->import_state(bytes); }
  std::optional<double> take_loss() override { return inner_->take_loss(); }

 private:
  core::Environment& env_;
  std::unique_ptr<core::training::Learner> inner_;
  double samples_per_second_;
  double paced_seconds_ = 0;  // busy time of the micro-batches asked for, as paced
  double next_start_ = 0;     // the paced device is free from then on
  core::TimerHandle hold_ = 0;
};

}  // namespace swarmlab::exec
