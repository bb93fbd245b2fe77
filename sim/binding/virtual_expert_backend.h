#pragma once
// Sizes-only experts for the simulator (the expert seam, core/dmoe/expert_backend.h): a batch of
// rows takes the time the runtime peer's compute speed implies and yields a virtual tensor. The
// peer's compute_sps is read as forward rows per second; a backward pass recomputes the forward
// (gradient checkpointing) and costs backward_cost times a forward pass.
#include <set>

#include "core/dmoe/expert_backend.h"
#include "core/env.h"

namespace swarmlab::sim {

class VirtualExpertBackend final : public core::dmoe::ExpertBackend {
 public:
  VirtualExpertBackend(core::Environment& env, std::uint32_t input_width, std::uint32_t output_width,
                       double backward_cost = 3.0);

  std::uint32_t input_width() const override { return input_width_; }
  std::uint32_t output_width() const override { return output_width_; }
  bool has_values() const override { return false; }
  void create(const core::dmoe::ExpertUid& uid) override { experts_.insert(uid); }
  void load(const core::dmoe::ExpertUid& uid, std::span<const std::uint8_t> checkpoint) override;
  void remove(const core::dmoe::ExpertUid& uid) override { experts_.erase(uid); }
  std::vector<std::uint8_t> checkpoint(const core::dmoe::ExpertUid&) const override { return {}; }
  void forward(const core::dmoe::ExpertUid& uid, const core::dmoe::Tensor& input,
               std::function<void(core::dmoe::Tensor)> done) override;
  void backward(const core::dmoe::ExpertUid& uid, const core::dmoe::Tensor& input, const core::dmoe::Tensor& grad_output,
                std::function<void(core::dmoe::Tensor)> done) override;

 private:
  core::Environment& env_;
  std::uint32_t input_width_, output_width_;
  double backward_cost_;
  std::set<core::dmoe::ExpertUid> experts_;
};

}  // namespace swarmlab::sim
