#include "sim/binding/virtual_expert_backend.h"

#include <cmath>
#include <stdexcept>

namespace swarmlab::sim {

using core::dmoe::Tensor;

VirtualExpertBackend::VirtualExpertBackend(core::Environment& env, std::uint32_t input_width, std::uint32_t output_width,
                                           double backward_cost)
    : env_(env), input_width_(input_width), output_width_(output_width), backward_cost_(backward_cost) {
  if (input_width == 0 || output_width == 0 || !(backward_cost > 0))
    throw std::invalid_argument("virtual expert backend: widths and backward cost must be positive");
}

void VirtualExpertBackend::load(const core::dmoe::ExpertUid& uid, std::span<const std::uint8_t> checkpoint) {
  if (!checkpoint.empty()) throw core::dmoe::CheckpointError("a sizes-only expert's checkpoint is empty");
  experts_.insert(uid);
}

void VirtualExpertBackend::forward(const core::dmoe::ExpertUid&, const Tensor& input, std::function<void(Tensor)> done) {
  const std::uint32_t rows = input.rows;
  const std::uint32_t width = output_width_;
  env_.compute(rows, [rows, width, done = std::move(done)] { done(Tensor::sized(rows, width)); });
}

void VirtualExpertBackend::backward(const core::dmoe::ExpertUid&, const Tensor& input, const Tensor&,
                                    std::function<void(Tensor)> done) {
  const std::uint32_t rows = input.rows;
  const std::uint32_t width = input_width_;
  const auto work = static_cast<std::uint64_t>(std::llround(backward_cost_ * rows));
  env_.compute(work, [rows, width, done = std::move(done)] { done(Tensor::sized(rows, width)); });
}

}  // namespace swarmlab::sim
