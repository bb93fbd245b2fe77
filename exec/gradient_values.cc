#include "exec/gradient_values.h"

#include <algorithm>
#include <cmath>

namespace swarmlab::exec {
namespace {

std::uint64_t mix(std::uint64_t z) {  // the splitmix64 finaliser
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::uint64_t gradient_key(std::uint64_t seed, std::uint64_t round, core::PeerId peer) {
  return mix(mix(mix(seed + 0x5EED) ^ round) ^ (static_cast<std::uint64_t>(peer) + 1));
}

float gradient_value(std::uint64_t key, std::uint64_t index) {
  // 24 random bits: k · 2^-23 − 1 is exact in float.
  const std::uint64_t bits = mix(key + index * 0x9E3779B97F4A7C15ull) >> 40;
  return static_cast<float>(bits) * 0x1.0p-23f - 1.0f;
}

void fill_gradient(std::uint64_t key, std::span<float> out) {
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = gradient_value(key, i);
}

AverageCheck check_average(const core::averaging::RoundPlan& plan, std::uint64_t seed, std::span<const float> values,
                           std::uint64_t stride, std::uint64_t offset) {
  std::vector<std::uint64_t> keys;
  std::vector<double> weights;
  double total = 0;
  for (std::size_t m = 0; m < plan.size(); ++m)
    if (plan.weights[m] > 0) {
      keys.push_back(gradient_key(seed, plan.round_id, plan.members[m]));
      weights.push_back(plan.weights[m]);
      total += plan.weights[m];
    }
  AverageCheck out;
  stride = std::max<std::uint64_t>(stride, 1);
  for (std::uint64_t i = offset; i < values.size(); i += stride) {
    double sum = 0;
    for (std::size_t k = 0; k < keys.size(); ++k) sum += weights[k] * gradient_value(keys[k], i);
    out.max_abs_error = std::max(out.max_abs_error, std::abs(static_cast<double>(values[i]) - sum / total));
    ++out.checked;
  }
  return out;
}

double codec_tolerance(core::codec::Codec codec) {
  switch (codec) {
    case core::codec::Codec::Fp32: return 1e-5;        // float accumulation only
    case core::codec::Codec::Fp16: return 1e-3;        // two roundings of 2^-12 each, plus float sums
    case core::codec::Codec::Fp16Scaled: return 2e-3;
    case core::codec::Codec::Uint8Uniform: return 2.5e-2;  // two quantisations to 6σ/255 (σ ≈ 0.58)
  }
  return 0;
}

}  // namespace swarmlab::exec
