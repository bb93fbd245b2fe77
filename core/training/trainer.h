#pragma once
// One peer's local training loop (docs/dedloc.md §1): it computes gradients in micro-batches
// through Environment::compute at its own speed and accumulates samples towards its next
// contribution. Whoever coordinates the collaboration (the progress estimate and matchmaking, or a
// simulator's driver) takes the accumulated samples when a global step begins and tells the trainer
// when to pause (averaging in sequence) and resume, and when a step has been applied.
//
// Pausing lets the micro-batch in flight finish: a GPU does not abandon a forward/backward pass,
// and its samples count towards the next contribution.
#include <cstdint>
#include <functional>

#include "core/env.h"

namespace swarmlab::core::training {

struct TrainerConfig {
  std::uint64_t micro_batch = 16;  // samples per compute call
  // Stop after this many samples since the last take() (DiLoCo's H x local batch); 0 = no quota.
  std::uint64_t quota = 0;
};

class Trainer {
 public:
  // Called after each micro-batch with its sample count.
  using OnSamples = std::function<void(std::uint64_t samples)>;

  Trainer(Environment& env, TrainerConfig config, OnSamples on_samples);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Starts (or resumes) computing.
  void resume();
  // Stops after the micro-batch in flight.
  void pause();
  // Hands over the samples accumulated since the last take() and starts a new accumulation.
  std::uint64_t take();

  std::uint64_t accumulated() const { return accumulated_; }
  bool computing() const { return job_ != 0; }
  bool quota_reached() const { return config_.quota > 0 && accumulated_ >= config_.quota; }
  // Busy time of the compute device so far, including the micro-batch in flight up to now.
  Seconds compute_time() const;

  // Optimizer steps this peer has applied (its view of the global step).
  std::uint64_t step() const { return step_; }
  void set_step(std::uint64_t step) { step_ = step; }

 private:
  void launch();
  void on_done(std::uint64_t samples);

  Environment& env_;
  TrainerConfig config_;
  OnSamples on_samples_;
  bool running_ = false;
  TimerHandle job_ = 0;
  Seconds job_started_ = 0;
  Seconds busy_ = 0;
  std::uint64_t accumulated_ = 0;
  std::uint64_t step_ = 0;
};

}  // namespace swarmlab::core::training
