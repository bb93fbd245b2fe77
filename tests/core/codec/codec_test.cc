#include "core/codec/codec.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "core/rng.h"
#include "core/wire.h"

namespace swarmlab::core::codec {
namespace {

constexpr Codec kAll[] = {Codec::Fp32, Codec::Fp16, Codec::Fp16Scaled, Codec::Uint8Uniform};
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<float> gaussian(std::size_t n, double mean, double sigma, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(mean + sigma * rng.normal());
  return v;
}

std::vector<float> round_trip(Codec c, const std::vector<float>& in) {
  std::vector<std::uint8_t> bytes;
  encode(c, in, bytes);
  std::vector<float> out(in.size());
  decode(c, bytes, out);
  return out;
}

struct Stats {
  double mean, sigma;
};
Stats stats(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  const double mean = s / v.size();
  double q = 0;
  for (float x : v) q += (x - mean) * (x - mean);
  return {mean, std::sqrt(q / v.size())};
}

float header_float(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  float f;
  std::memcpy(&f, bytes.data() + offset, 4);
  return f;
}

TEST(CodecTest, NamesRoundTripAndUnknownNamesAreRejected) {
  for (Codec c : kAll) EXPECT_EQ(parse_codec(name(c)), c);
  EXPECT_EQ(name(Codec::Fp16Scaled), "fp16-scaled");
  EXPECT_EQ(name(Codec::Uint8Uniform), "uint8");
  EXPECT_THROW(parse_codec("int8"), std::invalid_argument);
  EXPECT_THROW(parse_codec(""), std::invalid_argument);
  EXPECT_THROW(parse_codec("FP16"), std::invalid_argument);
}

TEST(CodecTest, EncodedSizeIsExactlyWhatEncodeAppends) {
  for (Codec c : kAll) {
    for (std::size_t n : {0, 1, 2, 3, 7, 8, 63, 64, 511, 512, 513, 1000, 1023, 1025, 4096, 131072, 131075}) {
      const auto v = gaussian(n, 0.5, 2.0, n);
      std::vector<std::uint8_t> out = {0xAB, 0xCD};  // encode appends: earlier bytes stay
      encode(c, v, out);
      ASSERT_EQ(out.size(), 2 + encoded_size(c, n)) << name(c) << " n=" << n;
      EXPECT_EQ(out[0], 0xAB);
      EXPECT_EQ(out[1], 0xCD);
    }
    EXPECT_GE(static_cast<double>(encoded_size(c, 1 << 20)), bytes_per_element(c) * (1 << 20));
    EXPECT_LE(static_cast<double>(encoded_size(c, 1 << 20)), bytes_per_element(c) * (1 << 20) + 8);
  }
  EXPECT_EQ(encoded_size(Codec::Fp32, 10), 40u);
  EXPECT_EQ(encoded_size(Codec::Fp16, 10), 20u);
  EXPECT_EQ(encoded_size(Codec::Fp16Scaled, 10), 28u);
  EXPECT_EQ(encoded_size(Codec::Uint8Uniform, 10), 18u);
}

TEST(CodecTest, EmptyVectorsRoundTrip) {
  for (Codec c : kAll) {
    std::vector<std::uint8_t> bytes;
    encode(c, std::span<const float>(), bytes);
    EXPECT_EQ(bytes.size(), encoded_size(c, 0));
    std::vector<float> out;
    EXPECT_NO_THROW(decode(c, bytes, out));
  }
}

TEST(CodecTest, Fp32IsExactIncludingSpecialValues) {
  std::vector<float> v = gaussian(1000, 3.0, 1e5, 1);
  v.insert(v.end(), {0.0f, -0.0f, kInf, -kInf, 1e-45f, std::numeric_limits<float>::max()});
  const auto out = round_trip(Codec::Fp32, v);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(std::memcmp(&out[i], &v[i], 4), 0) << i;
  v.push_back(kNan);
  EXPECT_TRUE(std::isnan(round_trip(Codec::Fp32, v).back()));
}

TEST(CodecTest, Fp16RelativeErrorIsAtMostHalfAnUlpInTheNormalRange) {
  for (double scale : {1e-4, 1.0, 100.0, 10000.0}) {
    auto v = gaussian(20000, 0.0, scale, 2);
    const auto out = round_trip(Codec::Fp16, v);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double a = std::fabs(v[i]);
      if (a < 0x1p-14 || a > 65504) continue;
      ASSERT_LE(std::fabs(out[i] - v[i]), a * 0x1p-11) << v[i];
    }
  }
  // Subnormal range: absolute error at most half the subnormal step.
  for (float x : {1e-6f, -3e-7f, 5e-8f, 1e-9f}) EXPECT_LE(std::fabs(round_trip(Codec::Fp16, {x})[0] - x), 0x1p-25f);
}

TEST(CodecTest, Fp16SpecialValues) {
  const std::vector<float> v = {0.0f, -0.0f, kInf, -kInf, kNan, 1e6f, -1e6f, 65504.0f, 1e-10f, -1e-10f};
  const auto out = round_trip(Codec::Fp16, v);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_TRUE(std::signbit(out[1]));
  EXPECT_EQ(out[2], kInf);
  EXPECT_EQ(out[3], -kInf);
  EXPECT_TRUE(std::isnan(out[4]));
  EXPECT_EQ(out[5], kInf);  // overflow
  EXPECT_EQ(out[6], -kInf);
  EXPECT_EQ(out[7], 65504.0f);
  EXPECT_EQ(out[8], 0.0f);  // underflow keeps the sign
  EXPECT_TRUE(std::signbit(out[9]));
}

// |x̂ − x| ≤ scale·(|z|·2^-11 + 2^-25) plus a few float roundings, z = (x − mean)/scale.
TEST(CodecTest, Fp16ScaledErrorIsRelativeToTheSpreadNotTheMagnitude) {
  for (auto [mean, sigma] : {std::pair{0.0, 1.0}, {0.0, 1e-7}, {1e-3, 1e-6}, {1000.0, 1.0}, {0.0, 1e7}, {-5.0, 30.0}}) {
    const auto v = gaussian(10000, mean, sigma, 3);
    std::vector<std::uint8_t> bytes;
    encode(Codec::Fp16Scaled, v, bytes);
    const float m = header_float(bytes, 0), s = header_float(bytes, 4);
    const Stats st = stats(v);
    EXPECT_NEAR(m, st.mean, 1e-6 * (std::fabs(st.mean) + st.sigma));
    EXPECT_NEAR(s, st.sigma, 1e-6 * st.sigma);
    std::vector<float> out(v.size());
    decode(Codec::Fp16Scaled, bytes, out);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double z = (static_cast<double>(v[i]) - m) / s;
      const double bound = s * (std::fabs(z) * (0x1p-11 + 0x1p-20) + 0x1p-24) + 0x1p-22 * (std::fabs(v[i]) + std::fabs(m));
      ASSERT_LE(std::fabs(out[i] - v[i]), bound) << "mean " << mean << " sigma " << sigma << " x " << v[i];
    }
  }
  // Tiny gradients: plain fp16 flushes them to (sub)normal garbage, the scaled form keeps 11 bits.
  const auto tiny = gaussian(1000, 0.0, 1e-7, 4);
  const auto plain = round_trip(Codec::Fp16, tiny), scaled = round_trip(Codec::Fp16Scaled, tiny);
  double plain_err = 0, scaled_err = 0;
  for (std::size_t i = 0; i < tiny.size(); ++i) {
    plain_err = std::max(plain_err, std::fabs(static_cast<double>(plain[i]) - tiny[i]));
    scaled_err = std::max(scaled_err, std::fabs(static_cast<double>(scaled[i]) - tiny[i]));
  }
  EXPECT_LT(scaled_err * 100, plain_err);
}

TEST(CodecTest, Fp16ScaledSpecialValues) {
  // A constant part: scale falls back to 1 and the values come back exactly.
  EXPECT_EQ(round_trip(Codec::Fp16Scaled, std::vector<float>(17, 3.25f)), std::vector<float>(17, 3.25f));
  EXPECT_EQ(round_trip(Codec::Fp16Scaled, {42.5f}), std::vector<float>{42.5f});
  // inf/NaN travel as such and do not poison the statistics of the others.
  std::vector<float> v = gaussian(100, 10.0, 2.0, 5);
  v[3] = kInf;
  v[4] = -kInf;
  v[5] = kNan;
  const auto out = round_trip(Codec::Fp16Scaled, v);
  EXPECT_EQ(out[3], kInf);
  EXPECT_EQ(out[4], -kInf);
  EXPECT_TRUE(std::isnan(out[5]));
  for (std::size_t i = 6; i < v.size(); ++i) EXPECT_NEAR(out[i], v[i], 0.01);
  // All non-finite: nothing to scale by, still decodes.
  const auto odd = round_trip(Codec::Fp16Scaled, {kInf, kNan});
  EXPECT_EQ(odd[0], kInf);
  EXPECT_TRUE(std::isnan(odd[1]));
}

TEST(CodecTest, Uint8ErrorIsAtMostHalfABucketInsideSixSigmaAndClampedOutside) {
  for (auto [mean, sigma] : {std::pair{0.0, 1.0}, {5.0, 1e-3}, {-100.0, 50.0}, {0.0, 1e-20}}) {
    const auto v = gaussian(20000, mean, sigma, 6);
    std::vector<std::uint8_t> bytes;
    encode(Codec::Uint8Uniform, v, bytes);
    const Stats st = stats(v);
    const double half_bucket = 6 * st.sigma / 255 / 2;
    const float low = header_float(bytes, 0), step = header_float(bytes, 4);
    EXPECT_NEAR(step, 6 * st.sigma / 255, 1e-6 * st.sigma);
    const double high = low + 255.0 * step;
    std::vector<float> out(v.size());
    decode(Codec::Uint8Uniform, bytes, out);
    int outside = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double x = v[i];
      if (std::fabs(x - st.mean) <= 3 * st.sigma * (1 - 1e-6)) {
        ASSERT_LE(std::fabs(out[i] - x), half_bucket * (1 + 1e-4) + 0x1p-23 * std::fabs(x)) << x;
      } else if (x < low || x > high) {
        ++outside;
        ASSERT_FLOAT_EQ(out[i], static_cast<float>(x < low ? low : high)) << x;
      }
    }
    EXPECT_GT(outside, 0);  // ~0.27% of a Gaussian lies beyond 3σ
  }
}

TEST(CodecTest, Uint8SpecialValues) {
  EXPECT_EQ(round_trip(Codec::Uint8Uniform, std::vector<float>(9, -7.5f)), std::vector<float>(9, -7.5f));
  std::vector<float> v = gaussian(1000, 0.0, 1.0, 8);
  v[0] = kInf;
  v[1] = -kInf;
  v[2] = kNan;
  std::vector<std::uint8_t> bytes;
  encode(Codec::Uint8Uniform, v, bytes);
  EXPECT_EQ(bytes[8 + 0], 255);
  EXPECT_EQ(bytes[8 + 1], 0);
  EXPECT_EQ(bytes[8 + 2], 128);  // NaN: the level next to the mean
  const float step = header_float(bytes, 4);
  EXPECT_NEAR(step, 6.0 / 255, 0.2 / 255);  // the finite values set the range
}

TEST(CodecTest, DecodeRejectsWrongSizes) {
  const auto v = gaussian(100, 1.0, 1.0, 9);
  for (Codec c : kAll) {
    std::vector<std::uint8_t> bytes;
    encode(c, v, bytes);
    std::vector<float> out(v.size());
    auto truncated = bytes;
    truncated.pop_back();
    EXPECT_THROW(decode(c, truncated, out), DecodeError) << name(c);
    auto longer = bytes;
    longer.push_back(0);
    EXPECT_THROW(decode(c, longer, out), DecodeError) << name(c);
    EXPECT_THROW(decode(c, std::span<const std::uint8_t>(), out), DecodeError) << name(c);
    std::vector<float> fewer(v.size() - 1);
    EXPECT_THROW(decode(c, bytes, fewer), DecodeError) << name(c);
  }
}

TEST(CodecTest, DecodeRejectsInvalidHeaders) {
  const auto v = gaussian(10, 1.0, 1.0, 10);
  auto rejects = [&](Codec c, std::size_t offset, float bad) {
    std::vector<std::uint8_t> bytes;
    encode(c, v, bytes);
    std::memcpy(bytes.data() + offset, &bad, 4);
    std::vector<float> out(v.size());
    EXPECT_THROW(decode(c, bytes, out), DecodeError) << name(c) << " offset " << offset << " value " << bad;
  };
  for (Codec c : {Codec::Fp16Scaled, Codec::Uint8Uniform}) {
    for (std::size_t offset : {0, 4})  // mean or low; scale or step
      for (float bad : {kNan, kInf, -kInf}) rejects(c, offset, bad);
    rejects(c, 4, -1.0f);  // negative scale or step
  }
  rejects(Codec::Fp16Scaled, 4, 0.0f);  // the encoder never writes a zero scale
}

TEST(CodecTest, GarbageNeverCrashesAndOnlyThrowsDecodeError) {
  Rng rng(11);
  for (int trial = 0; trial < 3000; ++trial) {
    const Codec c = kAll[rng.below(4)];
    const std::size_t n = rng.below(64);
    // Half the time the size is right, so the header and payload themselves are garbage.
    const std::size_t size = rng.bernoulli(0.5) ? encoded_size(c, n) : rng.below(300);
    std::vector<std::uint8_t> bytes(size);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next_u64());
    std::vector<float> out(n);
    try {
      decode(c, bytes, out);
      EXPECT_EQ(size, encoded_size(c, n));
    } catch (const DecodeError&) {
    }
  }
}

}  // namespace
}  // namespace swarmlab::core::codec
