#pragma once
// IEEE 754 binary16 ("half") conversion, written as selects rather than branches so that loops over
// arrays vectorise. float -> half rounds to nearest, ties to even; overflow becomes infinity, tiny
// values become subnormals or signed zero, NaN stays a (quiet) NaN. half -> float is exact (a NaN
// keeps its payload and comes out quiet). Both agree bit for bit with x86's F16C conversions.
#include <bit>
#include <cstdint>

namespace swarmlab::core::codec {

inline std::uint16_t float_to_half(float x) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t a = f & 0x7FFFFFFFu;  // |x|

  // Normal half range: rebias the exponent (127 -> 15) and drop 13 mantissa bits. Adding 0xFFF plus
  // the lowest kept bit rounds to nearest even; a carry out of the mantissa bumps the exponent, which
  // is exactly right (and turns 65520 and above into infinity, 0x7C00).
  const std::uint32_t normal = (a - 0x38000000u + 0xFFFu + ((a >> 13) & 1u)) >> 13;

  // Subnormal half range (|x| < 2^-14): adding 0.5f leaves an exponent whose ulp is 2^-24, the
  // half subnormal step, so the FPU's own round-to-nearest-even computes round(|x| * 2^24).
  const float shifted = std::bit_cast<float>(a) + 0.5f;
  const std::uint32_t subnormal = std::bit_cast<std::uint32_t>(shifted) - 0x3F000000u;

  // |x| >= 2^16 or inf/NaN: infinity, or a quiet NaN that keeps the top payload bits.
  const std::uint32_t is_nan = 0u - static_cast<std::uint32_t>(a > 0x7F800000u);
  const std::uint32_t special = 0x7C00u | (is_nan & (0x0200u | ((a >> 13) & 0x3FFu)));

  // Branch-free select by all-ones/all-zeros masks, so that array loops vectorise.
  const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(a < 0x38800000u);
  const std::uint32_t is_big = 0u - static_cast<std::uint32_t>(a >= 0x47800000u);
  const std::uint32_t h = (subnormal & is_sub) | (normal & ~(is_sub | is_big)) | (special & is_big);
  return static_cast<std::uint16_t>(h | sign);
}

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t em = h & 0x7FFFu;  // exponent and mantissa
  // Normal: rebias the exponent (15 -> 127). Inf/NaN: all-ones exponent, mantissa kept; a NaN
  // comes out quiet, as the F16C instruction (core/codec/kernels.cc) makes it.
  const std::uint32_t normal = (em << 13) + 0x38000000u;
  const std::uint32_t quiet = 0x00400000u & (0u - static_cast<std::uint32_t>(em > 0x7C00u));
  const std::uint32_t special = (em << 13) | 0x7F800000u | quiet;
  // Subnormal (and zero): the mantissa counts units of 2^-24, exact in float.
  const std::uint32_t subnormal =
      std::bit_cast<std::uint32_t>(static_cast<float>(static_cast<std::int32_t>(em)) * 0x1p-24f);
  const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(em < 0x0400u);
  const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(em >= 0x7C00u);
  const std::uint32_t f = (subnormal & is_sub) | (normal & ~(is_sub | is_special)) | (special & is_special);
  return std::bit_cast<float>(f | sign);
}

}  // namespace swarmlab::core::codec
