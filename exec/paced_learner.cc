#include "exec/paced_learner.h"

#include <algorithm>
#include <stdexcept>

namespace swarmlab::exec {

PacedLearner::PacedLearner(core::Environment& env, std::unique_ptr<core::training::Learner> inner,
                           double samples_per_second)
    : env_(env), inner_(std::move(inner)), samples_per_second_(samples_per_second) {
  if (!inner_) throw std::invalid_argument("PacedLearner: no learner to pace");
  if (!(samples_per_second > 0)) throw std::invalid_argument("PacedLearner: samples per second must be > 0");
}

PacedLearner::~PacedLearner() {
  if (hold_) env_.cancel(hold_);
}

void PacedLearner::compute(std::uint64_t samples, std::function<void()> done) {
  const double floor = static_cast<double>(samples) / samples_per_second_;
  const double start = std::max(env_.now(), next_start_);
  next_start_ = start + floor;
  paced_seconds_ += floor;
  if (start <= env_.now()) return inner_->compute(samples, std::move(done));
  hold_ = env_.schedule_at(start, [this, samples, done = std::move(done)]() mutable {
    hold_ = 0;
    inner_->compute(samples, std::move(done));
  });
}

double PacedLearner::compute_seconds() const { return std::max(paced_seconds_, inner_->compute_seconds()); }

}  // namespace swarmlab::exec
