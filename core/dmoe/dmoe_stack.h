#pragma once
// A trainer's stack of L DMoE layers (docs/learning-at-home.md §4): one batch's walk forward
// through every layer, then backward through them in reverse. What the trainer computes itself
// between the layers (its gates and the residual path) sits behind TrunkModel. A batch dropped at
// any layer releases the forward calls the other layers still keep for it. This is the one such
// walk: the simulator's trainers (sizes only) and live trainers (libtorch) both run it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "core/dmoe/dmoe_layer.h"
#include "core/env.h"

namespace swarmlab::core::dmoe {

// The trainer's own computation around each DMoE layer.
class TrunkModel {
 public:
  virtual ~TrunkModel() = default;
  // Layer `layer`'s gate on its input h: the grid's dims score vectors of length side.
  virtual std::vector<std::vector<double>> gate(std::uint64_t batch, std::uint32_t layer, const Tensor& h) = 0;
  // Layer `layer`'s output from its input h and the mixture's output (h + mixture for a residual block).
  virtual Tensor output(std::uint64_t batch, std::uint32_t layer, Tensor h, const Tensor& mixture) = 0;
  // dL/d(input of `layer`) from dL/d(its output) and the mixture's backward (the experts' input
  // gradient and the gate's score-vector gradient).
  virtual Tensor input_gradient(std::uint64_t batch, std::uint32_t layer, Tensor grad_output,
                                const MixtureGradient& mixture) = 0;
};

enum class BatchDrop {
  None,
  NoExperts,  // a beam search found no live expert
  NoAnswer,   // no chosen expert answered a forward call
  Backward,   // no chosen expert answered a backward call
};

struct StackForward {
  BatchDrop dropped = BatchDrop::None;
  Tensor output;                       // h_L, with None
  std::uint32_t experts_answered = 0;  // forward calls answered, over every layer
};

struct StackBackward {
  BatchDrop dropped = BatchDrop::None;
  Tensor grad_input;  // dL/dh_0, with None
};

class DmoeStack {
 public:
  // `layers` (at least one) outlive the stack. pause_mean_s > 0: an exponentially distributed pause of that mean
  // after every expert call of a training batch (the delay of docs §10); 0: none.
  // std::invalid_argument for no layers or a negative pause.
  DmoeStack(Environment& env, std::vector<DmoeLayer*> layers, TrunkModel& trunk, Seconds pause_mean_s = 0);
  ~DmoeStack() { *alive_ = false; }
  DmoeStack(const DmoeStack&) = delete;
  DmoeStack& operator=(const DmoeStack&) = delete;

  // Forward batch `batch` (an id not in flight) from h_0. A training batch keeps its layers' calls
  // for backward(); any other is released when it reaches the top. Layer 0's gate runs inside the
  // call, `done` later. std::invalid_argument for an id already in flight.
  void forward(std::uint64_t batch, Tensor input, bool train, std::function<void(StackForward)> done);
  // Backward a training batch that reached the top, from dL/dh_L. std::out_of_range when it is
  // not kept.
  void backward(std::uint64_t batch, Tensor grad_output, std::function<void(StackBackward)> done);
  // Every layer forward call as it completes, dropped or not (search statistics).
  void set_observer(std::function<void(std::uint32_t layer, const LayerForward&)> observer) {
    observer_ = std::move(observer);
  }
  std::size_t in_flight() const { return batches_.size(); }
  std::uint32_t layers() const { return static_cast<std::uint32_t>(layers_.size()); }

 private:
  struct Batch {
    bool train = true;
    std::vector<std::uint64_t> calls;  // each layer's forward call, first layer first
    std::uint32_t experts_answered = 0;
  };
  void forward_from(std::uint64_t batch, std::uint32_t layer, Tensor h, std::function<void(StackForward)> done);
  void backward_from(std::uint64_t batch, std::uint32_t above, Tensor grad, std::function<void(StackBackward)> done);
  void release(std::uint64_t batch);  // forgets the batch and every call its layers keep
  void after_pause(bool train, std::function<void()> then);

  Environment& env_;
  std::vector<DmoeLayer*> layers_;
  TrunkModel& trunk_;
  Seconds pause_mean_s_;
  std::map<std::uint64_t, Batch> batches_;
  std::function<void(std::uint32_t, const LayerForward&)> observer_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::dmoe
