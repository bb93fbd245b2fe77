#include "exec/seeded_vector_learner.h"

#include "exec/gradient_values.h"

namespace swarmlab::exec {

SeededVectorLearner::SeededVectorLearner(core::Environment& env, std::uint64_t seed, std::uint64_t length)
    : env_(env), seed_(seed), length_(length) {}

SeededVectorLearner::~SeededVectorLearner() { env_.cancel(job_); }

void SeededVectorLearner::compute(std::uint64_t, std::function<void()> done) {
  job_ = env_.schedule(0, [this, done = std::move(done)] {
    job_ = 0;
    done();
  });
}

std::span<float> SeededVectorLearner::begin_averaging(std::uint64_t) {
  values_.resize(length_);
  fill_gradient(gradient_key(seed_, round_, env_.self()), values_);
  return values_;
}

void SeededVectorLearner::import_state(std::span<const std::uint8_t> bytes) {
  if (!bytes.empty()) throw core::training::StateError("an averaging-only run has no state to load");
}

}  // namespace swarmlab::exec
