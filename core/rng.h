#pragma once
// Deterministic pseudo-random numbers for the core. Written out here rather than taken from
// <random> because the standard distributions are implementation-defined: the same seed must give
// the same run on every standard library.
#include <cmath>
#include <cstdint>

namespace swarmlab::core {

// splitmix64: expands a seed into well-mixed state words.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman & Vigna), with distributions implemented exactly.
class Rng {
  __extension__ using Wide = unsigned __int128;  // GCC/Clang extension; silences -Wpedantic

 public:
  explicit Rng(std::uint64_t seed = 0, std::uint64_t stream = 0) {
    std::uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (auto& w : s_) w = splitmix64(x);
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, n); n > 0. Unbiased (Lemire's multiply-and-reject).
  std::uint64_t below(std::uint64_t n) {
    Wide m = static_cast<Wide>(next_u64()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<Wide>(next_u64()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  bool bernoulli(double p) { return uniform() < p; }

  // Exponential with the given mean.
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }

  // Log-uniform in [lo, hi] (0 < lo <= hi): uniform in log space, as link rates and latencies of
  // a population are drawn.
  double log_uniform(double lo, double hi) { return std::exp(std::log(lo) + uniform() * (std::log(hi) - std::log(lo))); }

  // Standard normal (Box-Muller; one value per call, for simplicity and reproducibility).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // An independent stream derived from this one (for per-peer or per-component randomness).
  Rng fork(std::uint64_t stream) { return Rng(next_u64(), stream + 1); }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace swarmlab::core
