#pragma once
// The vectors a live averaging run averages, and the check of its result. Every element is a
// pure function of (seed, round, peer, index), uniform in [-1, 1), so any peer can recompute any
// other peer's vector - and hence the exact weighted average it should end with - without a single
// extra message. A counter-based hash rather than a random stream: generating element i needs no
// state, which makes checking a sample of positions as cheap as checking them all is thorough.
#include <cstdint>
#include <span>

#include "core/averaging/round_plan.h"
#include "core/codec/codec.h"

namespace swarmlab::exec {

std::uint64_t gradient_key(std::uint64_t seed, std::uint64_t round, core::PeerId peer);
float gradient_value(std::uint64_t key, std::uint64_t index);
void fill_gradient(std::uint64_t key, std::span<float> out);

struct AverageCheck {
  double max_abs_error = 0;   // max |value - exact weighted average| over the checked positions
  std::uint64_t checked = 0;  // positions checked
};

// Compares `values` (a sender's vector after the round) with the exact weighted average of the
// plan's senders' vectors at positions offset, offset + stride, ... (stride >= 1).
AverageCheck check_average(const core::averaging::RoundPlan& plan, std::uint64_t seed, std::span<const float> values,
                           std::uint64_t stride, std::uint64_t offset = 0);

// The largest error a correct round may show with this wire codec, for vectors in [-1, 1).
double codec_tolerance(core::codec::Codec codec);

}  // namespace swarmlab::exec
