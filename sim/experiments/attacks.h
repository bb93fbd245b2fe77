#pragma once
// What a Byzantine peer sends instead of its gradient (docs/trust.md §3). Attackers are peers of
// the simulation that run the unchanged protocol; only the vector their learner hands over is
// crafted, from their own honest gradient and, where the attack needs it, their estimate of the
// honest gradients' coordinate-wise mean and deviation.
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "core/names.h"
#include "core/rng.h"

namespace swarmlab::sim {

enum class Attack {
  SignFlip,        // −g
  Noise,           // g plus Gaussian noise of 10 × ‖μ‖ in norm
  LittleIsEnough,  // μ − z·σ coordinate-wise, z as Baruch et al. (2019) choose it for n and m
  Bias,            // g plus a constant vector of 10 × ‖μ‖ in norm, in one fixed random direction
  DropOut,         // g, then it leaves the round before returning the span it reduces
};

inline constexpr core::Named<Attack> kAttackNames[] = {{Attack::SignFlip, "sign-flip"},
                                                       {Attack::Noise, "noise"},
                                                       {Attack::LittleIsEnough, "little-is-enough"},
                                                       {Attack::Bias, "bias"},
                                                       {Attack::DropOut, "drop-out"}};
inline std::string_view name(Attack a) { return core::name_of(kAttackNames, a); }

// The attackers' estimate of the honest gradients, coordinate-wise.
struct HonestEstimate {
  std::vector<double> mean, deviation;
};
HonestEstimate estimate_honest(std::span<const std::vector<float>> gradients);

// "A little is enough": the largest z for which s = ⌊n/2 + 1⌋ − m honest peers are still farther
// from the mean than the attackers, z = Φ⁻¹((n − s) / n) (0 when m is too small to matter).
double little_is_enough_z(std::size_t peers, std::size_t attackers);

// Writes what an attacker with honest gradient `own` sends into `out`.
void craft_attack(Attack attack, std::span<const float> own, const HonestEstimate& honest, std::size_t peers,
                  std::size_t attackers, core::Rng& rng, std::span<float> out);

}  // namespace swarmlab::sim
