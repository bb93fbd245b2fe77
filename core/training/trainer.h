#pragma once
// One peer's local training loop (docs/dedloc.md §1): it runs its learner in micro-batches, at the
// learner's own pace, and counts the samples accumulated towards its next contribution. The peer
// that owns it takes the accumulated samples when a round begins, pauses it (averaging in sequence,
// loading state) and resumes it.
//
// Pausing lets the micro-batch in flight finish: a GPU does not abandon a forward/backward pass,
// and its samples count towards the next contribution.
#include <cstdint>
#include <functional>

#include "core/training/learner.h"

namespace swarmlab::core::training {

struct TrainerConfig {
  std::uint64_t micro_batch = 16;  // samples per compute call
  // Stop after this many samples since the last take() (DiLoCo's H x local batch, or an
  // averaging-only run's fixed contribution); 0 = no quota.
  std::uint64_t quota = 0;
};

class Trainer {
 public:
  // Called after each micro-batch with its sample count.
  using OnSamples = std::function<void(std::uint64_t samples)>;

  // Throws std::invalid_argument on a zero micro-batch.
  Trainer(Learner& learner, TrainerConfig config, OnSamples on_samples);
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Starts (or resumes) computing.
  void resume();
  // Stops after the micro-batch in flight.
  void pause();
  // Hands over the samples accumulated since the last take() and starts a new accumulation.
  std::uint64_t take();

  std::uint64_t accumulated() const { return accumulated_; }
  bool computing() const { return in_flight_; }
  bool running() const { return running_; }
  bool quota_reached() const { return config_.quota > 0 && accumulated_ >= config_.quota; }
  const TrainerConfig& config() const { return config_; }

 private:
  void launch();
  void on_done(std::uint64_t samples);

  Learner& learner_;
  TrainerConfig config_;
  OnSamples on_samples_;
  bool running_ = false;
  bool in_flight_ = false;
  std::uint64_t accumulated_ = 0;
};

}  // namespace swarmlab::core::training
