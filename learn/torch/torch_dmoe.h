#pragma once
// Learning@home on libtorch (docs/learning-at-home.md §10): the two halves of a DMoE model that
// live processes run.
//
// - TorchExpertBackend: the expert seam (core/dmoe/expert_backend.h) for a runtime. Every expert
//   is a feed-forward block width → hidden (ReLU) → width with its own Adam optimizer; forward
//   computes the block, backward recomputes it (gradient checkpointing), takes one Adam step on
//   the expert from the output gradient and returns the input gradient. Its checkpoint is the
//   expert's parameters and Adam state.
// - TorchDmoeTrainerModel: what a trainer holds itself. A stem (784 → width, ReLU), per DMoE layer
//   a gate (width → dims·side, averaged over the batch's rows: selection is per batch, docs §7),
//   and a head (width → 10 classes). Layer l's output is h_{l+1} = h_l + mixture_l(h_l) (a
//   residual block whose mixture runs on the remote experts). The trainer calls the pieces in
//   order and routes the tensors between them and the experts; each batch keeps its own graph and
//   gradients, so several batches may be in flight, and finish() takes one Adam step on the
//   trainer's parameters with that batch's gradients.
//
// Both compute on the calling thread (the process's event loop): the models are small. The
// header is ABI-neutral like torch_learner.h: only the .cc includes libtorch.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/dmoe/expert_backend.h"
#include "learn/fashion_mnist.h"
#include "learn/torch/torch_learner.h"

namespace swarmlab::learn {

// The process's torch intra-op threads (a process-wide setting); n <= 0 keeps libtorch's default.
void set_intra_op_threads(int n);

struct TorchExpertConfig {
  std::uint32_t width = 32;   // the expert's input and output width
  std::uint32_t hidden = 64;  // its inner width
  double lr = 1e-3;           // Adam, betas (0.9, 0.999), eps 1e-8
  std::uint64_t seed = 1;     // a fresh expert's weights come from (seed, uid): the same everywhere
  Device device = Device::Auto;
};

// Parameters of one expert: 2·width·hidden + hidden + width.
std::uint64_t expert_parameter_count(const TorchExpertConfig& config);

class TorchExpertBackend final : public core::dmoe::ExpertBackend {
 public:
  // Runs a callable later on the runtime's thread (the live EventLoop's post(), or a timer).
  using Post = std::function<void(std::function<void()>)>;
  // std::invalid_argument for a zero width; std::runtime_error when CUDA is asked for and absent.
  TorchExpertBackend(TorchExpertConfig config, Post post);
  ~TorchExpertBackend() override;
  TorchExpertBackend(const TorchExpertBackend&) = delete;
  TorchExpertBackend& operator=(const TorchExpertBackend&) = delete;

  std::uint32_t input_width() const override;
  std::uint32_t output_width() const override;
  bool has_values() const override { return true; }
  void create(const core::dmoe::ExpertUid& uid) override;
  void load(const core::dmoe::ExpertUid& uid, std::span<const std::uint8_t> checkpoint) override;
  void remove(const core::dmoe::ExpertUid& uid) override;
  std::vector<std::uint8_t> checkpoint(const core::dmoe::ExpertUid& uid) const override;
  void forward(const core::dmoe::ExpertUid& uid, const core::dmoe::Tensor& input,
               std::function<void(core::dmoe::Tensor)> done) override;
  void backward(const core::dmoe::ExpertUid& uid, const core::dmoe::Tensor& input, const core::dmoe::Tensor& grad_output,
                std::function<void(core::dmoe::Tensor)> done) override;

  // Adam steps this expert has taken (0 for one it does not host).
  std::uint64_t updates(const core::dmoe::ExpertUid& uid) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct TorchDmoeTrainerConfig {
  std::uint32_t width = 32;
  std::uint32_t layers = 4;
  std::uint32_t dims = 2, side = 4;  // each layer's grid: the gate gives dims score vectors of side
  double lr = 1e-3;                  // Adam on the stem, the gates and the head
  std::uint64_t seed = 1;            // initial weights (every trainer starts from the same)
  Device device = Device::Auto;
};

struct HeadResult {
  double loss = 0;            // mean cross-entropy over the batch
  std::uint32_t correct = 0;  // predictions equal to the label
  core::dmoe::Tensor grad;    // dL/dh_L (training batches only)
};

class TorchDmoeTrainerModel {
 public:
  // std::invalid_argument for a zero width, layer count, dims or side.
  explicit TorchDmoeTrainerModel(TorchDmoeTrainerConfig config);
  ~TorchDmoeTrainerModel();
  TorchDmoeTrainerModel(const TorchDmoeTrainerModel&) = delete;
  TorchDmoeTrainerModel& operator=(const TorchDmoeTrainerModel&) = delete;

  // Starts batch `id` on these images of `set`: returns h_0 = stem(x) (rows × width). With
  // `train` false nothing is kept for a backward pass (an evaluation batch). std::invalid_argument
  // for an id in use or no indices; std::out_of_range for an index outside the set.
  core::dmoe::Tensor begin(std::uint64_t id, const LabelledImages& set, std::span<const std::uint32_t> indices, bool train);
  // Layer `layer`'s gate on h_layer: dims score vectors of length side.
  std::vector<std::vector<double>> gate(std::uint64_t id, std::uint32_t layer, const core::dmoe::Tensor& h);
  // The head on h_L: the loss and correct predictions of the batch, and (training) dL/dh_L.
  HeadResult head(std::uint64_t id, const core::dmoe::Tensor& h);
  // Back through layer `layer`'s gate with dL/d(scores) (dims × side): the gate's gradient is kept
  // for finish(); returns dL/dh_layer through the gate.
  core::dmoe::Tensor gate_backward(std::uint64_t id, std::uint32_t layer, const std::vector<std::vector<double>>& grad_scores);
  // Back through the stem with dL/dh_0, then one Adam step on the trainer's parameters with this
  // batch's gradients; the batch is released.
  void finish(std::uint64_t id, const core::dmoe::Tensor& grad_h0);
  // Forgets a batch (dropped, or an evaluation batch).
  void release(std::uint64_t id);
  std::size_t batches_kept() const;
  std::uint64_t steps() const;
  std::uint64_t parameter_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace swarmlab::learn
