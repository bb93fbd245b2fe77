#pragma once
// The processor time a reducer spends on CenteredClip, charged where time is simulated
// (docs/trust.md §3). Live, the clip runs on the real processor and takes what it takes: the cost
// stays zero there. The weighted mean is not charged: it costs about 1/67 of a 20-iteration clip,
// and the simulator's rounds have never charged it.
#include <cstdint>

#include "core/types.h"

namespace swarmlab::core::averaging {

struct ReduceCost {
  // Seconds per value, a value being one element of one contribution: the coordinate-wise median
  // that starts the clip, and each iteration after it.
  Seconds clip_median_s_per_value = 0;
  Seconds clip_iteration_s_per_value = 0;

  // The time to clip a part of `elements` elements over `contributions` contributions.
  Seconds of_clip(std::uint64_t elements, std::uint64_t contributions, std::uint32_t iterations) const {
    const double values = static_cast<double>(elements) * static_cast<double>(contributions);
    return values * (clip_median_s_per_value + iterations * clip_iteration_s_per_value);
  }
  bool charges() const { return clip_median_s_per_value > 0 || clip_iteration_s_per_value > 0; }
};

}  // namespace swarmlab::core::averaging
