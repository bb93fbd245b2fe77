#pragma once
// The live learner (core/training/learner.h) on libtorch: a model for Fashion-MNIST, a sample
// stream (learn/sample_stream.h) and a deterministic optimizer over one flat parameter vector.
//
// DeDLOC (docs/dedloc.md §1): compute(n) runs forward/backward on the next n samples of the stream
// and adds the gradient of their summed loss to an accumulator; begin_averaging() hands over the
// accumulator divided by the samples behind it (the MEAN gradient since the last hand-over);
// apply_averaged() takes one SGD step with momentum (PyTorch's rule, dampening 0) with the vector
// the round left there. Averaging the hand-overs with weights = sample counts is therefore one
// large-batch SGD step on the union of the samples.
// DiLoCo (docs/opendiloco.md §1): compute(n) is one inner AdamW step on n samples (mean loss);
// begin_averaging() hands over params_before_inner_steps - params_now; apply_averaged() returns to
// params_before and takes an outer SGD step with Nesterov momentum (lr 0.7, momentum 0.9).
//
// Threading. All torch work runs on one worker thread, in the order the peer's thread asked for
// it (a FIFO of jobs: micro-batches, optimizer steps, resets, state loads and snapshots). A
// finished micro-batch is posted back through `post`; only there, on the peer's thread, does its
// gradient join the accumulation, and then `done` runs. So begin_averaging() hands over exactly
// the micro-batches whose `done` has run (as the Trainer counts them), even while the next one
// computes, and apply_averaged() - with delayed parameter updates it comes while the next
// micro-batch computes - is queued and applied by the worker before the micro-batch after that.
// The result is a function of the order of calls alone. export_state(), parameters() and
// evaluate() wait for the jobs queued before them (at most one micro-batch and one step).
//
// A micro-batch in flight when a round begins lands in the next hand-over, computed on the
// parameters before that round's step (stale by one step, as with DPU). handover() lists, for the
// last hand-over, each micro-batch's stream positions and the parameter version it was computed
// at, so a replay can check or reproduce exactly what a step contained.
//
// The header is ABI-neutral (only integers, vectors, spans, std::function, smart pointers cross
// it): the .cc alone includes libtorch and is compiled with its flags, so the project also builds
// against a libtorch that uses the old libstdc++ string ABI (learn/README.md).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/names.h"
#include "core/training/learner.h"
#include "core/training/mode.h"
#include "learn/fashion_mnist.h"
#include "learn/sample_stream.h"

namespace swarmlab::learn {

enum class Model {
  Linear,  // softmax regression, 7,850 parameters (value checks by hand)
  Cnn,     // conv 3x3x8, pool, conv 3x3x16, pool, fc 128, fc 10: 103,018 parameters
  Mlp,     // 784-2048-1024-10: 3,716,106 parameters (a heavier vector for the network)
};
inline constexpr core::Named<Model> kModelNames[] = {{Model::Linear, "linear"}, {Model::Cnn, "cnn"}, {Model::Mlp, "mlp"}};

enum class Device { Auto, Cpu, Cuda };  // Auto: CUDA when libtorch sees a GPU
inline constexpr core::Named<Device> kDeviceNames[] = {{Device::Auto, "auto"}, {Device::Cpu, "cpu"}, {Device::Cuda, "cuda"}};

struct TorchLearnerConfig {
  Model model = Model::Cnn;
  core::training::Mode mode = core::training::Mode::Dedloc;
  std::uint64_t model_seed = 0;  // initial parameters; every peer of a run uses the same seed
  // DeDLOC: SGD with momentum on the averaged mean gradient.
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 0.0;
  // DiLoCo inner optimizer: AdamW (decoupled weight decay), linear warm-up over the first steps.
  double inner_lr = 1e-3;
  double inner_beta1 = 0.9;
  double inner_beta2 = 0.999;
  double inner_eps = 1e-8;
  double inner_weight_decay = 0.1;
  std::uint64_t inner_warmup_steps = 0;
  // DiLoCo outer optimizer: SGD with Nesterov momentum.
  double outer_lr = 0.7;
  double outer_momentum = 0.9;
  Device device = Device::Auto;
  int threads = 0;  // > 0: the process's torch intra-op threads (a process-wide setting)
};

struct Evaluation {
  double accuracy = 0;  // fraction of correct predictions
  double loss = 0;      // mean cross-entropy
  std::uint64_t samples = 0;
};

// One micro-batch of a hand-over: positions [first, first + count) of this peer's stream, computed
// with the parameters of version `version` (see parameter_version()).
struct MicroBatchRecord {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  std::uint64_t version = 0;
  bool operator==(const MicroBatchRecord&) const = default;
};

class TorchLearner final : public core::training::Learner {
 public:
  // Runs a callable on the peer's thread (the live EventLoop's post()).
  using Post = std::function<void(std::function<void()>)>;

  // `train` is the set the stream's indices point into. Throws std::invalid_argument on an empty
  // set or images of another size than the model's 28 x 28, std::runtime_error when CUDA is asked
  // for and absent.
  TorchLearner(TorchLearnerConfig config, std::shared_ptr<const LabelledImages> train,
               std::unique_ptr<SampleStream> stream, Post post);
  ~TorchLearner() override;  // waits for the job running on the worker; queued ones are dropped
  TorchLearner(const TorchLearner&) = delete;
  TorchLearner& operator=(const TorchLearner&) = delete;

  std::uint64_t parameter_count() const override;
  std::uint64_t state_bytes() const override;
  bool has_values() const override { return true; }
  // Throws std::logic_error when a micro-batch is already in flight, std::out_of_range when the
  // stream yields an index outside the training set.
  void compute(std::uint64_t samples, std::function<void()> done) override;
  double compute_seconds() const override;
  std::span<float> begin_averaging(std::uint64_t samples) override;
  void apply_averaged() override;
  void discard() override;
  std::vector<std::uint8_t> export_state() const override;
  void import_state(std::span<const std::uint8_t> bytes) override;
  std::optional<double> take_loss() override;

  // The micro-batches of the last hand-over, in the order they were computed.
  const std::vector<MicroBatchRecord>& handover() const;
  // Parameter changes the peer has asked for so far (optimizer or outer steps, state loads, DiLoCo
  // resets): a micro-batch computed after the k-th change carries version k.
  std::uint64_t parameter_version() const;
  // Optimizer steps (DeDLOC) or outer steps (DiLoCo) applied, and DiLoCo inner steps.
  std::uint64_t optimizer_steps() const;
  std::uint64_t inner_steps() const;
  // Samples whose micro-batch has completed (done posted) since construction.
  std::uint64_t samples_computed() const;

  // The flat parameter vector after every job queued so far.
  std::vector<float> parameters() const;
  // The same, queued behind the work asked for so far; `done` runs through `post` (the peer's
  // thread never waits for a micro-batch in flight).
  void parameters_async(std::function<void(std::vector<float>)> done);
  // Accuracy and mean loss on `test` with the parameters after every job queued so far (waits).
  Evaluation evaluate(const LabelledImages& test) const;
  // The same, queued behind the work asked for so far; `done` runs through `post`.
  void evaluate_async(std::shared_ptr<const LabelledImages> test, std::function<void(Evaluation)> done);

  // The architecture hash a state carries (model, parameter shapes, mode).
  std::uint64_t model_identity() const;
  bool on_cuda() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Parameter count of a model, without building it.
std::uint64_t model_parameter_count(Model model);

}  // namespace swarmlab::learn
