#include "core/codec/half.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "core/rng.h"

namespace swarmlab::core::codec {
namespace {

// The value a binary16 bit pattern denotes, straight from the IEEE definition.
double half_value(std::uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  double v;
  if (exp == 0) v = std::ldexp(mant, -24);
  else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(1024 + mant, exp - 25);
  return sign ? -v : v;
}

// Round-to-nearest-even of a finite float onto the binary16 grid, done in double arithmetic.
double reference_round(float x) {
  const double a = std::fabs(static_cast<double>(x));
  if (a == 0.0) return static_cast<double>(x);
  int e;
  std::frexp(a, &e);              // a in [2^(e-1), 2^e)
  const int exp = std::max(e - 1, -14);  // subnormals share the 2^-14 binade's spacing
  const double q = std::nearbyint(std::ldexp(a, 10 - exp));  // default mode: ties to even
  double r = std::ldexp(q, exp - 10);
  if (r > 65504.0) r = std::numeric_limits<double>::infinity();
  return std::signbit(x) ? -r : r;
}

void expect_matches_reference(float x) {
  const std::uint16_t h = float_to_half(x);
  const double got = half_value(h);
  if (std::isnan(x)) {
    EXPECT_TRUE(std::isnan(got)) << "x bits " << std::bit_cast<std::uint32_t>(x);
    return;
  }
  const double want = reference_round(x);
  ASSERT_EQ(got, want) << "x = " << x << " bits " << std::hex << std::bit_cast<std::uint32_t>(x);
  ASSERT_EQ(std::signbit(got), std::signbit(want)) << "x = " << x;
}

TEST(HalfTest, EveryHalfDecodesToItsIeeeValue) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<std::uint16_t>(h));
    const double want = half_value(static_cast<std::uint16_t>(h));
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), want) << h;
      ASSERT_EQ(std::signbit(f), std::signbit(want)) << h;
    }
  }
}

TEST(HalfTest, EveryNonNanHalfRoundTrips) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7C00) == 0x7C00 && (bits & 0x3FF)) {
      EXPECT_EQ(float_to_half(half_to_float(bits)) & 0x7E00, 0x7E00) << "NaN stays a quiet NaN";
      continue;
    }
    ASSERT_EQ(float_to_half(half_to_float(bits)), bits) << h;
  }
}

TEST(HalfTest, RoundsLikeIeeeAcrossAllFloatBinades) {
  // A stride through every float bit pattern (all exponents, both signs), plus the patterns next to
  // every half value and every midpoint between neighbours, where ties-to-even matters.
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 65521) expect_matches_reference(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {
    const double lo = half_value(static_cast<std::uint16_t>(h));
    const double hi = h + 1 < 0x7C00 ? half_value(static_cast<std::uint16_t>(h + 1)) : 65536.0;
    const float mid = static_cast<float>((lo + hi) / 2);  // exact: halves have 11 significant bits
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f), static_cast<float>(lo)}) {
      expect_matches_reference(x);
      expect_matches_reference(-x);
    }
  }
  Rng rng(7);
  for (int i = 0; i < 200000; ++i) expect_matches_reference(std::bit_cast<float>(static_cast<std::uint32_t>(rng.next_u64())));
}

TEST(HalfTest, SpecialValues) {
  constexpr float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(inf), 0x7C00);
  EXPECT_EQ(float_to_half(-inf), 0xFC00);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65519.99f), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // the tie rounds to even, past the largest half
  EXPECT_EQ(float_to_half(1e9f), 0x7C00);
  EXPECT_EQ(float_to_half(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(0x1p-25f), 0x0000);  // tie between 0 and 2^-24 goes to even (0)
  EXPECT_EQ(float_to_half(0x1.8p-25f), 0x0001);
  EXPECT_EQ(float_to_half(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(1.0f + 0x1p-11f), 0x3C00);  // tie to even
  EXPECT_EQ(float_to_half(1.0f + 0x1.8p-11f), 0x3C01);
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(half_to_float(float_to_half(std::numeric_limits<float>::signaling_NaN()))));
  EXPECT_EQ(half_to_float(0x7C00), inf);
  EXPECT_EQ(half_to_float(0xFC00), -inf);
}

}  // namespace
}  // namespace swarmlab::core::codec
