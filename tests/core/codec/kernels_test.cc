// Every SIMD build of the codec kernels this CPU runs (AVX2/FMA/F16C, AVX-512F) against the portable
// scalar build: same bits for every input class (NaN payloads, ±inf, ±0, subnormals on both sides,
// overflow to inf, rounding ties), every tail length and any alignment of the encoded bytes.
#include "core/codec/kernels.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/codec/half.h"
#include "core/rng.h"
#include "codec/simd_builds.h"

namespace swarmlab::core::codec::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

float f(std::uint32_t bits) { return std::bit_cast<float>(bits); }

// Floats where conversions are delicate, in both signs.
std::vector<float> tricky_floats() {
  std::vector<float> v;
  for (std::uint32_t bits : {0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u,  // zero, float subnormals
                             0x7F800000u, 0x7F800001u, 0x7FBFFFFFu, 0x7FC00000u,  // inf, signalling and quiet NaNs
                             0x7FC02000u, 0x7FFFFFFFu, 0x7F802000u, 0x7FA00000u, 0x7F7FFFFFu,
                             0x33000000u, 0x33000001u, 0x337FFFFFu, 0x33800000u, 0x33C00000u,  // around 2^-25, 2^-24
                             0x387FE000u, 0x387FF000u, 0x387FFFFFu, 0x38800000u,  // half subnormal/normal border
                             0x477FE000u, 0x477FEFFFu, 0x477FF000u, 0x477FF001u, 0x47800000u}) {  // 65504 .. 65536
    v.push_back(f(bits));
    v.push_back(f(bits | 0x80000000u));
  }
  // Every half value, and the midpoints between neighbours with their float neighbours.
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {
    const float lo = half_to_float(static_cast<std::uint16_t>(h));
    const float hi = h + 1 < 0x7C00 ? half_to_float(static_cast<std::uint16_t>(h + 1)) : 65536.0f;
    const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
    for (float x : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) {
      v.push_back(x);
      v.push_back(-x);
    }
  }
  // A stride through all bit patterns, and random ones.
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 40'009) v.push_back(f(static_cast<std::uint32_t>(bits)));
  Rng rng(3);
  for (int i = 0; i < 100'000; ++i) v.push_back(f(static_cast<std::uint32_t>(rng.next_u64())));
  return v;
}

std::vector<std::uint8_t> all_halves() {
  std::vector<std::uint8_t> bytes(2 * 65536);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto v = static_cast<std::uint16_t>(h);
    std::memcpy(bytes.data() + 2 * h, &v, 2);
  }
  return bytes;
}

void expect_same_floats(const std::vector<float>& a, const std::vector<float>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i])) << what << " at " << i;
}

// Runs an encoding kernel through both builds at output offsets 0..3 (misaligned stores) and
// every length up to 70 (tails), then on the whole input.
template <typename Run>
void compare_encoders(const Kernels& simd, const std::vector<float>& in, std::size_t bytes_per_value, Run run,
                      const std::string& what_) {
  const std::string what = what_ + " (" + simd.name + ")";
  auto check = [&](std::size_t n, std::size_t offset) {
    std::vector<std::uint8_t> a(offset + bytes_per_value * n + 1, 0xAA), b = a;
    run(scalar_kernels(), in.data(), n, a.data() + offset);
    run(simd, in.data(), n, b.data() + offset);
    ASSERT_EQ(a, b) << what << " n=" << n << " offset=" << offset;
  };
  for (std::size_t offset = 0; offset < 4; ++offset)
    for (std::size_t n = 0; n <= 70 && n <= in.size(); ++n) check(n, offset);
  check(in.size(), 1);
}

template <typename Run>
void compare_decoders(const Kernels& simd, const std::vector<std::uint8_t>& in, std::size_t n, Run run,
                      const std::string& what_) {
  const std::string what = what_ + " (" + simd.name + ")";
  for (std::size_t offset = 0; offset < 4; ++offset) {
    std::vector<std::uint8_t> shifted(offset);
    shifted.insert(shifted.end(), in.begin(), in.end());
    for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{9}, std::size_t{33}, n}) {
      std::vector<float> a(len, -1.0f), b(len, -2.0f);
      run(scalar_kernels(), shifted.data() + offset, len, a.data());
      run(simd, shifted.data() + offset, len, b.data());
      expect_same_floats(a, b, what + " len=" + std::to_string(len) + " offset=" + std::to_string(offset));
    }
  }
}

TEST(CodecKernels, DispatchPicksABuildThatExists) {
  EXPECT_STREQ(scalar_kernels().name, "scalar");
  if (avx512_kernels()) {
    EXPECT_STREQ(kernels().name, "avx512");
  } else if (avx2_kernels()) {
    EXPECT_STREQ(kernels().name, "avx2");
  } else {
    EXPECT_STREQ(kernels().name, "scalar");
  }
}

TEST(CodecKernels, ScalarHalfConversionIsFloatToHalf) {
  const auto in = tricky_floats();
  std::vector<std::uint8_t> out(2 * in.size());
  scalar_kernels().to_half(in.data(), in.size(), out.data());
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::uint16_t h;
    std::memcpy(&h, out.data() + 2 * i, 2);
    ASSERT_EQ(h, float_to_half(in[i])) << i;
  }
}

TEST(CodecKernels, HalfEncodingIsBitIdentical) {
  const auto in = tricky_floats();
  FOR_EACH_SIMD_BUILD compare_encoders(simd, in, 2, [](const Kernels& k, const float* in, std::size_t n, std::uint8_t* out) {
    k.to_half(in, n, out);
  }, "to_half");
}

TEST(CodecKernels, HalfDecodingIsBitIdenticalForEveryHalf) {
  FOR_EACH_SIMD_BUILD compare_decoders(simd, all_halves(), 65536, [](const Kernels& k, const std::uint8_t* in, std::size_t n, float* out) {
    k.from_half(in, n, out);
  }, "from_half");
  // A signalling NaN half comes out as a quiet NaN with its payload, in both builds.
  std::vector<float> out(1);
  const std::uint8_t snan[2] = {0x01, 0x7C};
  scalar_kernels().from_half(snan, 1, out.data());
  EXPECT_EQ(std::bit_cast<std::uint32_t>(out[0]), 0x7FC02000u);
}

TEST(CodecKernels, ScaledHalfIsBitIdentical) {
  const auto in = tricky_floats();
  // (mean, 1/scale) as the encoder makes them, including scales that overflow the half range.
  FOR_EACH_SIMD_BUILD for (auto [mean, inv] : {std::pair{0.0f, 1.0f}, {1.5f, 1e-3f}, {-3e-5f, 1e7f}, {1e30f, 1e-30f}, {0.25f, 3.0e38f}}) {
    compare_encoders(simd, in, 2, [mean, inv](const Kernels& k, const float* x, std::size_t n, std::uint8_t* out) {
      k.to_half_scaled(x, n, mean, inv, out);
    }, "to_half_scaled mean=" + std::to_string(mean));
    const float scale = 1.0f / inv;
    compare_decoders(simd, all_halves(), 65536, [mean, scale](const Kernels& k, const std::uint8_t* b, std::size_t n, float* out) {
      k.from_half_scaled(b, n, mean, scale, out);
    }, "from_half_scaled mean=" + std::to_string(mean));
  }
}

TEST(CodecKernels, LevelsAreBitIdentical) {
  std::vector<float> in = tricky_floats();
  // Values at and next to every level boundary (k + 0.5 steps above low), where truncation decides.
  const float low = -1.0f, step = 2.0f / 255, inv = 1.0f / step;
  for (int k = -3; k < 260; ++k) {
    const float x = low + (static_cast<float>(k) - 0.5f) * step;
    for (float y : {x, std::nextafter(x, -kInf), std::nextafter(x, kInf)}) in.push_back(y);
  }
  std::vector<std::uint8_t> levels;
  for (int rep = 0; rep < 3; ++rep)
    for (int k = 0; k < 256; ++k) levels.push_back(static_cast<std::uint8_t>(k * 7 + rep));
  FOR_EACH_SIMD_BUILD {
  for (auto [l, s] : {std::pair{low, inv}, {0.0f, 0.0f}, {-1e30f, 1e-36f}, {-3.0f, 42.5f}, {-kInf, 1.0f}})
    compare_encoders(simd, in, 1, [l, s](const Kernels& k, const float* x, std::size_t n, std::uint8_t* out) {
      k.to_level(x, n, l, s, out);
    }, "to_level low=" + std::to_string(l));
  for (auto [l, s] : {std::pair{low, step}, {0.0f, 0.0f}, {-3e38f, 3e38f}, {1e-40f, 1e-42f}, {5.0f, 1e-8f}})
    compare_decoders(simd, levels, levels.size(), [l, s](const Kernels& k, const std::uint8_t* b, std::size_t n, float* out) {
      k.from_level(b, n, l, s, out);
    }, "from_level low=" + std::to_string(l));
  }
}

TEST(CodecKernels, BlockMomentsAreBitIdenticalForEveryLength) {
  constexpr std::size_t kMaxBlocks = 6;  // the SIMD builds sum two or four full blocks at a time
  Rng rng(5);
  std::vector<float> x(kMaxBlocks * kSumBlock);
  for (float& v : x) v = static_cast<float>(rng.normal() * 1e3 + 7.0);
  auto same = [](float a, float b) {
    return std::isnan(a) ? std::isnan(b) : std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  };
  FOR_EACH_SIMD_BUILD for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {  // non-finite entries and float overflow
      x[3] = kInf;
      x[1100] = kNan;
      x[2200] = 3e38f;
      x[2216] = 3e38f;
    }
    for (float centre : {0.0f, 6.5f, -1234.5f})
      for (std::size_t n = 0; n <= x.size(); ++n) {
        float a[kMaxBlocks], b[kMaxBlocks], qa[kMaxBlocks], qb[kMaxBlocks];
        scalar_kernels().block_moments(x.data(), n, centre, a, qa);
        simd.block_moments(x.data(), n, centre, b, qb);
        for (std::size_t blk = 0; blk * kSumBlock < n; ++blk) {
          ASSERT_TRUE(same(a[blk], b[blk])) << simd.name << " n=" << n << " block " << blk;
          ASSERT_TRUE(same(qa[blk], qb[blk])) << simd.name << " n=" << n << " block " << blk;
        }
      }
  }
}

// The blocked moments against a double-precision reference, where a centred sum in float would
// lose most digits to cancellation if done naively: a large mean, a small spread, steps whose
// means differ, and a part of a single step.
TEST(CodecKernels, MomentsMatchADoubleReference) {
  Rng rng(11);
  for (std::size_t n : {std::size_t{1}, std::size_t{700}, std::size_t{8192}, std::size_t{100'003}}) {
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<float> v(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double centre = variant == 0 ? 0.0 : variant == 1 ? 1e4 : (i < n / 2 ? 1e3 : -5e2);
        v[i] = static_cast<float>(centre + rng.normal() * 0.1);
      }
      double mean = 0.0, m2 = 0.0;
      for (float x : v) mean += x;
      mean /= static_cast<double>(n);
      for (float x : v) m2 += (x - mean) * (x - mean);
      const double sigma = std::sqrt(m2 / static_cast<double>(n));
      std::vector<const Kernels*> builds = simd_builds();
      builds.push_back(&scalar_kernels());
      for (const Kernels* k : builds) {
        const Moments m = moments(*k, v);
        EXPECT_NEAR(m.mean, mean, 1e-6 * std::max(1.0, std::abs(mean))) << k->name << " n=" << n << " variant=" << variant;
        EXPECT_NEAR(m.sigma, sigma, 1e-3 * sigma + 1e-12) << k->name << " n=" << n << " variant=" << variant;
      }
    }
  }
}

// Whole encodings, header included, for every codec.
TEST(CodecKernels, EncodingsAreBitIdentical) {
  Rng rng(9);
  FOR_EACH_SIMD_BUILD for (std::size_t n : {0, 1, 5, 16, 31, 100, 511, 512, 513, 2047, 2048, 2049, 4097, 100'003}) {
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<float> v(n);
      const double scale = variant == 1 ? 1e-7 : variant == 2 ? 1e5 : 1.0;
      for (float& x : v) x = static_cast<float>(rng.normal() * scale + (variant == 3 ? 1e3 : 0.0));
      if (variant == 3 && n > 4) {
        v[0] = kInf;
        v[n / 2] = kNan;
        v[n - 1] = -kInf;
      }
      for (Codec c : {Codec::Fp32, Codec::Fp16, Codec::Fp16Scaled, Codec::Uint8Uniform}) {
        std::vector<std::uint8_t> a = {1, 2, 3}, b = a;
        encode_with(scalar_kernels(), c, v, a);
        encode_with(simd, c, v, b);
        ASSERT_EQ(a, b) << name(c) << " " << simd.name << " n=" << n << " variant=" << variant;
        std::vector<float> da(n), db(n);
        decode_with(scalar_kernels(), c, std::span<const std::uint8_t>(a).subspan(3), da);
        decode_with(simd, c, std::span<const std::uint8_t>(b).subspan(3), db);
        expect_same_floats(da, db, std::string(name(c)) + " " + simd.name + " decode n=" + std::to_string(n));
      }
    }
  }
}

}  // namespace
}  // namespace swarmlab::core::codec::detail
