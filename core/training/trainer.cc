#include "core/training/trainer.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace swarmlab::core::training {

Trainer::Trainer(Learner& learner, TrainerConfig config, OnSamples on_samples)
    : learner_(learner), config_(config), on_samples_(std::move(on_samples)) {
  if (config_.micro_batch == 0) throw std::invalid_argument("micro_batch must be positive");
}

void Trainer::resume() {
  running_ = true;
  if (!in_flight_) launch();
}

void Trainer::pause() { running_ = false; }

std::uint64_t Trainer::take() { return std::exchange(accumulated_, 0); }

void Trainer::launch() {
  if (!running_ || quota_reached()) return;
  std::uint64_t n = config_.micro_batch;
  // Under a quota the last micro-batch is cut to land exactly on it.
  if (config_.quota > 0) n = std::min(n, config_.quota - accumulated_);
  in_flight_ = true;
  learner_.compute(n, [this, n] { on_done(n); });
}

void Trainer::on_done(std::uint64_t samples) {
  in_flight_ = false;
  accumulated_ += samples;
  on_samples_(samples);  // may take(), pause() or resume()
  if (!in_flight_) launch();
}

}  // namespace swarmlab::core::training
