#pragma once
// The learner seam: what a collaborative peer trains, seen from the protocol (docs/dedloc.md §1,
// docs/opendiloco.md §1). The peer decides when to compute, when to average and when to step; the
// learner does the arithmetic. Bindings:
// - the simulator's virtual learner (sim/binding/virtual_learner.h): compute takes the time the
//   peer's speed implies; sizes only, or small real vectors for value checks;
// - libtorch in live mode (a model, a data stream, an optimizer).
//
// Every call comes from the peer's thread (the environment's single logical thread). A learner
// that computes elsewhere (a GPU, a worker thread) posts completion back to that thread itself and
// serialises its own work with begin_averaging()/apply_averaged() (delayed parameter updates call
// them while the next micro-batch computes).
//
// DeDLOC: compute() adds gradients; begin_averaging() hands over the mean gradient of the samples
// accumulated since the last hand-over, and apply_averaged() takes one optimizer step with the
// averaged vector. Averaging the means with weights = sample counts gives the mean over every
// sample of the global batch, so a collaboration steps as one large-batch SGD would.
// DiLoCo: compute() takes one inner optimizer step; begin_averaging() hands over the
// pseudo-gradient (parameters before the inner steps minus parameters now), apply_averaged()
// resets to the parameters before the inner steps and takes the outer step.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace swarmlab::core::training {

// A state that does not fit this learner (another model, truncated, garbage).
class StateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Learner {
 public:
  virtual ~Learner() = default;

  // Length of the flattened vector that is averaged.
  virtual std::uint64_t parameter_count() const = 0;
  // Bytes of export_state(): parameters and optimizer state, what a state download moves.
  virtual std::uint64_t state_bytes() const = 0;
  // False for a sizes-only learner: it averages no values (begin_averaging() returns an empty
  // span) and its state travels as virtual bytes.
  virtual bool has_values() const = 0;

  // Processes the next `samples` samples on this peer's compute device and calls `done` on the
  // peer's thread. At most one call is in flight; destroying the learner abandons it (`done` never
  // runs).
  virtual void compute(std::uint64_t samples, std::function<void()> done) = 0;
  // Busy time of the compute device so far, including the work in flight up to now.
  virtual double compute_seconds() const = 0;

  // Moves what accumulated since the last hand-over into the averaging buffer and returns it. The
  // span stays valid and is written by the round until apply_averaged() or discard(). A peer
  // replaying a step it missed calls it with nothing accumulated and writes the step's averaged
  // vector into the buffer: the step that follows must be the one the round's members took.
  virtual std::span<float> begin_averaging(std::uint64_t samples) = 0;
  // The round is over: the buffer holds the average, and zeros in spans whose average did not come
  // back (core/training/state_lineage.h). Takes the optimizer (DeDLOC) or outer (DiLoCo) step.
  virtual void apply_averaged() = 0;
  // Throws away the accumulation and any buffer handed over (the peer fell behind: it will load
  // newer state).
  virtual void discard() = 0;

  // The whole state (parameters, optimizer state, step counters) as bytes. Empty when
  // !has_values(): the download then moves state_bytes() virtual bytes.
  virtual std::vector<std::uint8_t> export_state() const = 0;
  // Replaces the state. Throws StateError, leaving the learner as it was, when `bytes` is not a
  // state of this model.
  virtual void import_state(std::span<const std::uint8_t> bytes) = 0;

  // Mean training loss of the samples computed since the last call; nullopt when none, or when
  // the learner has no values.
  virtual std::optional<double> take_loss() = 0;
};

}  // namespace swarmlab::core::training
