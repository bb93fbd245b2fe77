#include "sim/binding/virtual_learner.h"

#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/wire.h"

namespace swarmlab::sim {

namespace {
constexpr std::uint32_t kStateMagic = 0x564C524E;  // "VLRN"
}

VirtualLearner::VirtualLearner(core::Environment& env, VirtualLearnerOptions options)
    : env_(env), options_(std::move(options)) {
  if (options_.parameters == 0) throw std::invalid_argument("virtual learner: no parameters");
}

VirtualLearner::~VirtualLearner() { env_.cancel(job_); }

std::uint64_t VirtualLearner::state_bytes() const {
  return has_values() ? 16 + 4 * options_.parameters : options_.state_bytes;
}

void VirtualLearner::compute(std::uint64_t samples, std::function<void()> done) {
  // The callback waits here, so that the closure handed to the environment holds only `this`
  // (no allocation per micro-batch). One job at a time, as the trainer runs them.
  done_ = std::move(done);
  auto finish = [this] {
    job_ = 0;
    busy_ += env_.now() - job_started_;
    std::exchange(done_, nullptr)();
  };
  job_started_ = env_.now();
  job_ = options_.instant ? env_.schedule(0, finish) : env_.compute(samples, finish);
}

double VirtualLearner::compute_seconds() const { return busy_ + (job_ ? env_.now() - job_started_ : 0); }

std::span<float> VirtualLearner::begin_averaging(std::uint64_t) {
  if (!has_values()) return {};
  buffer_.assign(options_.parameters, 0.0f);
  if (options_.values->fill) options_.values->fill(buffer_);
  return buffer_;
}

void VirtualLearner::apply_averaged() {
  ++steps_;
  if (has_values() && options_.values->averaged) options_.values->averaged(buffer_);
}

std::vector<std::uint8_t> VirtualLearner::export_state() const {
  std::vector<std::uint8_t> out;
  if (!has_values()) return out;
  core::Writer w(out);
  w.u32(kStateMagic);
  w.u64(options_.parameters);
  w.u32(static_cast<std::uint32_t>(steps_));
  std::vector<float> params = buffer_;
  params.resize(options_.parameters, 0.0f);
  for (float v : params) w.f32(v);
  return out;
}

void VirtualLearner::import_state(std::span<const std::uint8_t> bytes) {
  try {
    core::Reader r(bytes);
    if (r.u32() != kStateMagic) throw core::training::StateError("not a virtual learner's state");
    if (r.u64() != options_.parameters) throw core::training::StateError("state of a model of another size");
    const std::uint32_t steps = r.u32();
    std::vector<float> params(options_.parameters);
    for (float& v : params) v = r.f32();
    r.finish();
    steps_ = steps;
    buffer_ = std::move(params);
  } catch (const core::DecodeError& e) {
    throw core::training::StateError(std::string("malformed state: ") + e.what());
  }
}

}  // namespace swarmlab::sim
