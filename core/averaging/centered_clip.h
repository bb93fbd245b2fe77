#pragma once
// CenteredClip, the robust aggregator a butterfly reducer may use instead of the weighted mean
// (docs/trust.md §3): starting from the coordinate-wise median of the contributions, it moves the
// estimate `iterations` times by the weighted mean of the contributions' offsets, each offset
// clipped to length `tau`:
//   v ← v + Σ w_i · min(1, τ / ‖x_i − v‖) · (x_i − v) / Σ w_i
// A contribution far from the honest ones pulls v by at most τ per iteration, however far it is.
// Weights are what senders claim (the samples behind their gradient), so a claim above the median
// claim counts as the median: one peer cannot buy influence by lying about its batch.
#include <cstddef>
#include <cstdint>
#include <span>

namespace swarmlab::core::averaging {

struct CenteredClip {
  double tau = 1.0;              // clip radius, in the units of the averaged vector
  std::uint32_t iterations = 20;

  // Throws std::invalid_argument unless tau > 0 (finite) and 1 <= iterations <= 1000.
  void validate() const;
};

// `rows`: weights.size() contributions of out.size() floats each, back to back. Writes the
// aggregate into `out` and returns how many contributions the last iteration clipped (a
// contribution holding a non-finite element, or no weight, is left out and counts as clipped;
// with none left, the aggregate is zero). Throws std::invalid_argument when the sizes disagree.
std::size_t centered_clip(std::span<const float> rows, std::span<const double> weights, const CenteredClip& options,
                          std::span<float> out);

}  // namespace swarmlab::core::averaging
