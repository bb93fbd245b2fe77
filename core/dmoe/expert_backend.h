#pragma once
// The expert seam: what an expert runtime computes, seen from the protocol (docs/learning-at-home.md
// §4-§5). The runtime decides what to batch, when to reply and which experts it hosts; the backend
// does the arithmetic. Bindings:
// - the simulator's sizes-only experts (sim/binding/virtual_expert_backend.h): a batch takes the
//   time the runtime's speed implies and yields a virtual tensor;
// - real experts with values (a small dense network in tests; libtorch in live mode).
//
// Calls come from the runtime's thread, one at a time: a backend that computes elsewhere posts
// `done` back to that thread itself.
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/dmoe/expert_grid.h"
#include "core/dmoe/tensor.h"

namespace swarmlab::core::dmoe {

// A checkpoint that does not fit this backend's experts (another shape, truncated, garbage).
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ExpertBackend {
 public:
  virtual ~ExpertBackend() = default;

  // Widths of an expert's input and output rows (every expert of a layer has the same).
  virtual std::uint32_t input_width() const = 0;
  virtual std::uint32_t output_width() const = 0;
  // False for sizes-only experts: they take and give virtual tensors.
  virtual bool has_values() const = 0;

  // Makes `uid` ready to serve: fresh, initialised from the uid, or from a checkpoint (throws
  // CheckpointError, hosting nothing, when it does not fit).
  virtual void create(const ExpertUid& uid) = 0;
  virtual void load(const ExpertUid& uid, std::span<const std::uint8_t> checkpoint) = 0;
  virtual void remove(const ExpertUid& uid) = 0;
  // The expert's parameters and optimizer state; empty for sizes-only experts.
  virtual std::vector<std::uint8_t> checkpoint(const ExpertUid& uid) const = 0;

  // The expert's output for a batch of rows (input.cols == input_width()).
  virtual void forward(const ExpertUid& uid, const Tensor& input, std::function<void(Tensor)> done) = 0;
  // Recomputes the forward pass (gradient checkpointing), applies the expert's own update from
  // grad_output and returns the gradient with respect to the input.
  virtual void backward(const ExpertUid& uid, const Tensor& input, const Tensor& grad_output,
                        std::function<void(Tensor)> done) = 0;
};

}  // namespace swarmlab::core::dmoe
