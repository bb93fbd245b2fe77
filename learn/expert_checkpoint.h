#pragma once
// An expert's checkpoint on the wire, as Learning@home keeps it in the DHT for whoever takes the
// expert over (docs/learning-at-home.md): "SWEX", format, width, hidden, updates, then the
// parameters (w1 [hidden, width], b1 [hidden], w2 [width, hidden], b2 [width]) flattened in that
// order, then Adam's m and v of each of the four in turn (m of w1, v of w1, m of b1, ...), fp32
// little-endian. No libtorch here: the decoder
// is fuzzed on its own (tests/fuzz/run_fuzz.sh learn), and the libtorch experts
// (learn/torch/torch_dmoe.h) only move tensors in and out.
#include <cstdint>
#include <span>
#include <vector>

namespace swarmlab::learn {

struct ExpertCheckpoint {
  std::uint64_t updates = 0;
  // Each expert_checkpoint_values(width, hidden) long, the four tensors one after the other.
  std::vector<float> params, adam_m, adam_v;
};

// Parameters of one feed-forward expert: 2·width·hidden + hidden + width.
std::uint64_t expert_checkpoint_values(std::uint32_t width, std::uint32_t hidden);

std::vector<std::uint8_t> encode_expert_checkpoint(std::uint32_t width, std::uint32_t hidden,
                                                   const ExpertCheckpoint& checkpoint);

// Throws core::dmoe::CheckpointError saying what is wrong (not a checkpoint, another format, an
// expert of other widths, another size, non-finite values). Nothing is read past the bytes' end
// and nothing is allocated before the size is checked.
ExpertCheckpoint decode_expert_checkpoint(std::span<const std::uint8_t> bytes, std::uint32_t width,
                                          std::uint32_t hidden);

}  // namespace swarmlab::learn
