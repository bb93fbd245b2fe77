#include "core/training/trainer.h"

#include <algorithm>
#include <stdexcept>

namespace swarmlab::core::training {

Trainer::Trainer(Environment& env, TrainerConfig config, OnSamples on_samples)
    : env_(env), config_(config), on_samples_(std::move(on_samples)) {
  if (config_.micro_batch == 0) throw std::invalid_argument("micro_batch must be positive");
}

Trainer::~Trainer() {
  if (job_) env_.cancel(job_);
}

void Trainer::resume() {
  running_ = true;
  if (!job_) launch();
}

void Trainer::pause() { running_ = false; }

std::uint64_t Trainer::take() {
  const std::uint64_t n = accumulated_;
  accumulated_ = 0;
  return n;
}

Seconds Trainer::compute_time() const { return busy_ + (job_ ? env_.now() - job_started_ : 0); }

void Trainer::launch() {
  if (!running_ || quota_reached()) return;
  std::uint64_t n = config_.micro_batch;
  // Under a quota the last micro-batch is cut to land exactly on it.
  if (config_.quota > 0) n = std::min(n, config_.quota - accumulated_);
  job_started_ = env_.now();
  job_ = env_.compute(n, [this, n] { on_done(n); });
}

void Trainer::on_done(std::uint64_t samples) {
  job_ = 0;
  busy_ += env_.now() - job_started_;
  accumulated_ += samples;
  on_samples_(samples);  // may take(), pause() or resume()
  if (!job_) launch();
}

}  // namespace swarmlab::core::training
