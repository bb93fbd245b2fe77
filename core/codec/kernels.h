#pragma once
// The array loops behind the codecs (core/codec/codec.h), in builds chosen at run time: a portable
// scalar one, one for x86 CPUs with AVX2, FMA and F16C, one for AVX-512F. All produce the same
// bits for every input (NaN, inf, subnormals, overflow, rounding ties included; tests/core/codec/
// checks it), so an encoding never depends on the machine that made it. Only the moments' squares
// use fused multiply-adds, and the scalar build computes those with std::fma, which rounds the same.
//
// Exposed for tests and benchmarks; the codecs use kernels().
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/codec/codec.h"

namespace swarmlab::core::codec::detail {

// Elements summed per block by the moments (see codec.cc); part of the numerics.
inline constexpr std::size_t kSumBlock = 512;
// The uint8 codec's levels.
inline constexpr int kLevels = 256;

struct Kernels {
  const char* name;  // "scalar", "avx2" or "avx512"
  // Encoded bytes are little-endian and may sit at any address.
  void (*to_half)(const float* in, std::size_t n, std::uint8_t* out);
  void (*from_half)(const std::uint8_t* in, std::size_t n, float* out);
  // half((x − mean) · inv) and mean + scale · float(h).
  void (*to_half_scaled)(const float* in, std::size_t n, float mean, float inv, std::uint8_t* out);
  void (*from_half_scaled)(const std::uint8_t* in, std::size_t n, float mean, float scale, float* out);
  // The level of (x − low) · inv (codec.cc has the rule) and float(double(low) + k · double(step)).
  void (*to_level)(const float* in, std::size_t n, float low, float inv, std::uint8_t* out);
  void (*from_level)(const std::uint8_t* in, std::size_t n, float low, float step, float* out);
  // Per block of kSumBlock values of x[0, n) (the last one may be shorter): the sum of x, and of
  // (x − centre)², each square added with one fused multiply-add. Each block is summed in 16
  // float lanes, lane k taking elements k, k + 16, ..., leftovers added to lane 0 in order, then
  // the lanes are added pairwise (k + k+8, k + k+4, ...).
  void (*block_moments)(const float* x, std::size_t n, float centre, float* sums, float* squares);
};

const Kernels& scalar_kernels();
// nullptr unless the CPU runs AVX2, FMA and F16C.
const Kernels* avx2_kernels();
// nullptr unless the CPU (and the OS) run AVX-512F.
const Kernels* avx512_kernels();
// The fastest this CPU runs; chosen once.
const Kernels& kernels();

struct Moments {
  double mean = 0.0;
  double sigma = 0.0;  // population standard deviation
};
// Mean and σ over the finite entries of `in`, which fix the header of fp16-scaled and uint8
// (codec.cc says how they are summed).
Moments moments(const Kernels& k, std::span<const float> in);

// encode() and decode() with the given kernels (tests compare the builds through these).
void encode_with(const Kernels& k, Codec codec, std::span<const float> in, std::vector<std::uint8_t>& out);
void decode_with(const Kernels& k, Codec codec, std::span<const std::uint8_t> in, std::span<float> out);

}  // namespace swarmlab::core::codec::detail
