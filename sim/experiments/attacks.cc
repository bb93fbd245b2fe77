#include "sim/experiments/attacks.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace swarmlab::sim {
namespace {

constexpr double kAttackScale = 10;  // noise and bias, relative to the honest mean's norm
constexpr std::uint64_t kBiasDirectionSeed = 0xB1A5;

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// Φ⁻¹ by bisection on the normal CDF (erfc), to 1e-12: called once per attack, not per element.
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

HonestEstimate estimate_honest(std::span<const std::vector<float>> gradients) {
  if (gradients.empty()) throw std::invalid_argument("estimate_honest: no gradients");
  const std::size_t d = gradients[0].size();
  HonestEstimate e;
  e.mean.assign(d, 0.0);
  e.deviation.assign(d, 0.0);
  const double n = static_cast<double>(gradients.size());
  for (const auto& g : gradients) {
    if (g.size() != d) throw std::invalid_argument("estimate_honest: gradients of different lengths");
    for (std::size_t k = 0; k < d; ++k) e.mean[k] += g[k] / n;
  }
  for (const auto& g : gradients)
    for (std::size_t k = 0; k < d; ++k) e.deviation[k] += (g[k] - e.mean[k]) * (g[k] - e.mean[k]) / n;
  for (double& v : e.deviation) v = std::sqrt(v);
  return e;
}

double little_is_enough_z(std::size_t peers, std::size_t attackers) {
  const auto n = static_cast<double>(peers);
  const double s = std::floor(n / 2 + 1) - static_cast<double>(attackers);
  const double p = (n - s) / n;
  return p <= 0.5 ? 0.0 : normal_quantile(std::min(p, 1 - 1e-12));
}

void craft_attack(Attack attack, std::span<const float> own, const HonestEstimate& honest, std::size_t peers,
                  std::size_t attackers, core::Rng& rng, std::span<float> out) {
  const std::size_t d = out.size();
  if (own.size() != d || honest.mean.size() != d || honest.deviation.size() != d)
    throw std::invalid_argument("craft_attack: vectors of different lengths");
  const double scale = kAttackScale * norm(honest.mean);
  switch (attack) {
    case Attack::SignFlip:
      for (std::size_t k = 0; k < d; ++k) out[k] = -own[k];
      return;
    case Attack::Noise: {
      const double sd = scale / std::sqrt(static_cast<double>(d));
      for (std::size_t k = 0; k < d; ++k) out[k] = static_cast<float>(own[k] + sd * rng.normal());
      return;
    }
    case Attack::LittleIsEnough: {
      const double z = little_is_enough_z(peers, attackers);
      for (std::size_t k = 0; k < d; ++k) out[k] = static_cast<float>(honest.mean[k] - z * honest.deviation[k]);
      return;
    }
    case Attack::Bias: {
      // One fixed direction for every attacker and round. Not (1, …, 1): adding the same amount
      // to every weight of a softmax model shifts every class's logit alike and changes nothing.
      core::Rng direction(kBiasDirectionSeed);
      std::vector<double> u(d);
      double length = 0;
      for (double& x : u) {
        x = direction.normal();
        length += x * x;
      }
      length = std::sqrt(length);
      for (std::size_t k = 0; k < d; ++k) out[k] = static_cast<float>(own[k] + scale * u[k] / length);
      return;
    }
    case Attack::DropOut:
      for (std::size_t k = 0; k < d; ++k) out[k] = own[k];
      return;
  }
}

}  // namespace swarmlab::sim
