#pragma once
// A learner's state on the wire, as a live peer downloads it from another (the state download of
// core/training/state_messages.h carries these bytes): "SWLS", format, the model's identity,
// optimizer steps, inner steps, n, k, then k vectors of n fp32 values and a CRC-32 of all before
// it, little-endian. No libtorch here: the decoder is fuzzed on its own (tests/fuzz/run_fuzz.sh
// learn), and the libtorch learner (learn/torch/torch_learner.h) only moves tensors in and out.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace swarmlab::learn {

// What a peer expects of a state: its model's identity, n values per vector, k vectors.
struct LearnerStateShape {
  std::uint64_t identity = 0;
  std::uint64_t values = 0;
  std::uint32_t vectors = 0;
};

struct LearnerState {
  std::uint64_t steps = 0, inner_steps = 0;
  std::vector<std::vector<float>> vectors;  // each of shape.values
};

// The size of a state of this shape, in bytes.
std::uint64_t learner_state_bytes(const LearnerStateShape& shape);

std::vector<std::uint8_t> encode_learner_state(std::uint64_t identity, const LearnerState& state);

// Throws core::training::StateError saying what is wrong (not a state, another format, another
// model — `model` names the expected one —, other sizes, truncated, trailing bytes, corrupt,
// non-finite values). Nothing is read past the bytes' end and nothing is allocated before the size
// is checked.
LearnerState decode_learner_state(std::span<const std::uint8_t> bytes, const LearnerStateShape& expected,
                                  std::string_view model);

}  // namespace swarmlab::learn
