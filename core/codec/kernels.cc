#include "core/codec/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/codec/half.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define SWARMLAB_CODEC_X86 1
#endif

namespace swarmlab::core::codec::detail {
namespace {

constexpr std::size_t kLanes = 16;
constexpr std::size_t kChunk = 256;  // scalar loops convert through small local arrays
constexpr float kTopLevel = static_cast<float>(kLevels - 1) + 0.5f;

// The level of one value: t = (x − low)·inv + 0.5 truncated is the nearest level; NaN goes to the
// middle level, and everything is clamped to [0, 255]. Written as selects so that it vectorises.
inline std::uint8_t level_of(float x, float low, float inv) {
  float t = (x - low) * inv + 0.5f;
  t = t == t ? t : 128.0f;
  t = std::min(std::max(t, 0.5f), kTopLevel);
  return static_cast<std::uint8_t>(static_cast<int>(t));
}

// ---- Portable scalar build. ----

void to_half_scalar(const float* in, std::size_t n, std::uint8_t* out) {
  std::uint16_t buf[kChunk];
  for (std::size_t base = 0; base < n; base += kChunk) {
    const std::size_t len = std::min(kChunk, n - base);
    for (std::size_t i = 0; i < len; ++i) buf[i] = float_to_half(in[base + i]);
    std::memcpy(out + 2 * base, buf, 2 * len);
  }
}

void from_half_scalar(const std::uint8_t* in, std::size_t n, float* out) {
  std::uint16_t buf[kChunk];
  for (std::size_t base = 0; base < n; base += kChunk) {
    const std::size_t len = std::min(kChunk, n - base);
    std::memcpy(buf, in + 2 * base, 2 * len);
    for (std::size_t i = 0; i < len; ++i) out[base + i] = half_to_float(buf[i]);
  }
}

void to_half_scaled_scalar(const float* in, std::size_t n, float mean, float inv, std::uint8_t* out) {
  std::uint16_t buf[kChunk];
  for (std::size_t base = 0; base < n; base += kChunk) {
    const std::size_t len = std::min(kChunk, n - base);
    for (std::size_t i = 0; i < len; ++i) buf[i] = float_to_half((in[base + i] - mean) * inv);
    std::memcpy(out + 2 * base, buf, 2 * len);
  }
}

void from_half_scaled_scalar(const std::uint8_t* in, std::size_t n, float mean, float scale, float* out) {
  std::uint16_t buf[kChunk];
  for (std::size_t base = 0; base < n; base += kChunk) {
    const std::size_t len = std::min(kChunk, n - base);
    std::memcpy(buf, in + 2 * base, 2 * len);
    for (std::size_t i = 0; i < len; ++i) out[base + i] = mean + scale * half_to_float(buf[i]);
  }
}

void to_level_scalar(const float* in, std::size_t n, float low, float inv, std::uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = level_of(in[i], low, inv);
}

void from_level_scalar(const std::uint8_t* in, std::size_t n, float low, float step, float* out) {
  float level[kLevels];
  for (int k = 0; k < kLevels; ++k) level[k] = static_cast<float>(double(low) + k * double(step));
  for (std::size_t i = 0; i < n; ++i) out[i] = level[in[i]];
}

// The 16 lanes added pairwise, as SIMD registers fold: lane k + lane k+8, then k + k+4, k + k+2,
// and the last two.
inline float lane_tree(const float* lane) {
  float v[8];
  for (std::size_t k = 0; k < 8; ++k) v[k] = lane[k] + lane[k + 8];
  for (std::size_t k = 0; k < 4; ++k) v[k] = v[k] + v[k + 4];
  for (std::size_t k = 0; k < 2; ++k) v[k] = v[k] + v[k + 2];
  return v[0] + v[1];
}

// The leftovers of a block that is not a multiple of 16 long go to lane 0 in order; then both
// lane sets are folded.
inline void finish_block(float* s, float* q, const float* x, std::size_t i, std::size_t n, float c, float* sum,
                         float* square) {
  for (; i < n; ++i) {
    s[0] += x[i];
    const float d = x[i] - c;
    q[0] = std::fma(d, d, q[0]);
  }
  *sum = lane_tree(s);
  *square = lane_tree(q);
}

void block_moments_scalar(const float* x, std::size_t n, float c, float* sums, float* squares) {
  for (std::size_t b = 0; b * kSumBlock < n; ++b) {
    const float* p = x + b * kSumBlock;
    const std::size_t len = std::min(kSumBlock, n - b * kSumBlock);
    float s[kLanes] = {}, q[kLanes] = {};
    std::size_t i = 0;
    for (; i + kLanes <= len; i += kLanes)
      for (std::size_t k = 0; k < kLanes; ++k) {
        s[k] += p[i + k];
        const float d = p[i + k] - c;
        q[k] = std::fma(d, d, q[k]);
      }
    finish_block(s, q, p, i, len, c, sums + b, squares + b);
  }
}

constexpr Kernels kScalar{"scalar",          to_half_scalar,   from_half_scalar, to_half_scaled_scalar,
                          from_half_scaled_scalar, to_level_scalar, from_level_scalar, block_moments_scalar};

// ---- AVX2 + F16C build: the same operations, eight lanes at a time. ----
#ifdef SWARMLAB_CODEC_X86
#define SWARMLAB_AVX2 __attribute__((target("avx2,f16c,fma")))

constexpr int kRoundNearest = _MM_FROUND_TO_NEAREST_INT;  // ties to even, whatever MXCSR says

SWARMLAB_AVX2 inline void store_half8(std::uint8_t* out, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_cvtps_ph(v, kRoundNearest));
}
SWARMLAB_AVX2 inline __m256 load_half8(const std::uint8_t* in) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in)));
}

SWARMLAB_AVX2 void to_half_avx2(const float* in, std::size_t n, std::uint8_t* out) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 a = _mm256_loadu_ps(in + i), b = _mm256_loadu_ps(in + i + 8);
    const __m256 c = _mm256_loadu_ps(in + i + 16), d = _mm256_loadu_ps(in + i + 24);
    store_half8(out + 2 * i, a);
    store_half8(out + 2 * i + 16, b);
    store_half8(out + 2 * i + 32, c);
    store_half8(out + 2 * i + 48, d);
  }
  for (; i + 8 <= n; i += 8) store_half8(out + 2 * i, _mm256_loadu_ps(in + i));
  to_half_scalar(in + i, n - i, out + 2 * i);
}

SWARMLAB_AVX2 void from_half_avx2(const std::uint8_t* in, std::size_t n, float* out) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 a = load_half8(in + 2 * i), b = load_half8(in + 2 * i + 16);
    const __m256 c = load_half8(in + 2 * i + 32), d = load_half8(in + 2 * i + 48);
    _mm256_storeu_ps(out + i, a);
    _mm256_storeu_ps(out + i + 8, b);
    _mm256_storeu_ps(out + i + 16, c);
    _mm256_storeu_ps(out + i + 24, d);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, load_half8(in + 2 * i));
  from_half_scalar(in + 2 * i, n - i, out + i);
}

SWARMLAB_AVX2 void to_half_scaled_avx2(const float* in, std::size_t n, float mean, float inv, std::uint8_t* out) {
  const __m256 m = _mm256_set1_ps(mean), s = _mm256_set1_ps(inv);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(in + i), m), s);
    const __m256 b = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(in + i + 8), m), s);
    store_half8(out + 2 * i, a);
    store_half8(out + 2 * i + 16, b);
  }
  for (; i + 8 <= n; i += 8) store_half8(out + 2 * i, _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(in + i), m), s));
  to_half_scaled_scalar(in + i, n - i, mean, inv, out + 2 * i);
}

SWARMLAB_AVX2 void from_half_scaled_avx2(const std::uint8_t* in, std::size_t n, float mean, float scale, float* out) {
  const __m256 m = _mm256_set1_ps(mean), s = _mm256_set1_ps(scale);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm256_storeu_ps(out + i, _mm256_add_ps(m, _mm256_mul_ps(s, load_half8(in + 2 * i))));
    _mm256_storeu_ps(out + i + 8, _mm256_add_ps(m, _mm256_mul_ps(s, load_half8(in + 2 * i + 16))));
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _mm256_add_ps(m, _mm256_mul_ps(s, load_half8(in + 2 * i))));
  from_half_scaled_scalar(in + 2 * i, n - i, mean, scale, out + i);
}

// level_of() on eight values, as 32-bit integers.
SWARMLAB_AVX2 inline __m256i levels8(__m256 x, __m256 low, __m256 inv) {
  __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(x, low), inv), _mm256_set1_ps(0.5f));
  t = _mm256_blendv_ps(t, _mm256_set1_ps(128.0f), _mm256_cmp_ps(t, t, _CMP_UNORD_Q));
  t = _mm256_min_ps(_mm256_max_ps(t, _mm256_set1_ps(0.5f)), _mm256_set1_ps(kTopLevel));
  return _mm256_cvttps_epi32(t);
}

SWARMLAB_AVX2 void to_level_avx2(const float* in, std::size_t n, float low, float inv, std::uint8_t* out) {
  const __m256 l = _mm256_set1_ps(low), s = _mm256_set1_ps(inv);
  // Packing interleaves 128-bit lanes: dwords come out as a0 b0 c0 d0 a1 b1 c1 d1 (four levels each).
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256i a = levels8(_mm256_loadu_ps(in + i), l, s), b = levels8(_mm256_loadu_ps(in + i + 8), l, s);
    const __m256i c = levels8(_mm256_loadu_ps(in + i + 16), l, s), d = levels8(_mm256_loadu_ps(in + i + 24), l, s);
    const __m256i bytes = _mm256_packus_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_permutevar8x32_epi32(bytes, order));
  }
  to_level_scalar(in + i, n - i, low, inv, out + i);
}

SWARMLAB_AVX2 void from_level_avx2(const std::uint8_t* in, std::size_t n, float low, float step, float* out) {
  // float(double(low) + k·double(step)), as the scalar table holds it, four doubles at a time
  // (faster here than reading the table with gathers).
  const __m256d l = _mm256_set1_pd(low), s = _mm256_set1_pd(step);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i k = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + i)));
    const __m256d lo = _mm256_add_pd(l, _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(k)), s));
    const __m256d hi = _mm256_add_pd(l, _mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(k, 1)), s));
    _mm256_storeu_ps(out + i, _mm256_set_m128(_mm256_cvtpd_ps(hi), _mm256_cvtpd_ps(lo)));
  }
  from_level_scalar(in + i, n - i, low, step, out + i);
}

// block_moments(): lanes 0-7 of a block in one register, 8-15 in another; leftovers and the
// folding in the same order as the scalar build. Two full blocks go through the loop together, so
// that four independent chains per sum hide the latency of each addition.
SWARMLAB_AVX2 inline float fold_lanes(__m256 lo, __m256 hi) {
  const __m256 v8 = _mm256_add_ps(lo, hi);
  const __m128 v4 = _mm_add_ps(_mm256_castps256_ps128(v8), _mm256_extractf128_ps(v8, 1));
  const __m128 v2 = _mm_add_ps(v4, _mm_movehl_ps(v4, v4));
  return _mm_cvtss_f32(_mm_add_ss(v2, _mm_shuffle_ps(v2, v2, 1)));
}

// One block's running sums: s (of x) and q (of (x − c)²), lanes 0-7 and 8-15.
struct Moments8 {
  __m256 s_lo, s_hi, q_lo, q_hi;
};

SWARMLAB_AVX2 inline void add8(__m256& s, __m256& q, const float* x, __m256 c) {
  const __m256 v = _mm256_loadu_ps(x);
  s = _mm256_add_ps(s, v);
  const __m256 d = _mm256_sub_ps(v, c);
  q = _mm256_fmadd_ps(d, d, q);
}

SWARMLAB_AVX2 inline void finish8(const Moments8& m, const float* x, std::size_t i, std::size_t n, float c,
                                  float* sum, float* square) {
  if (i == n) {
    *sum = fold_lanes(m.s_lo, m.s_hi);
    *square = fold_lanes(m.q_lo, m.q_hi);
    return;
  }
  float s[kLanes], q[kLanes];
  _mm256_storeu_ps(s, m.s_lo);
  _mm256_storeu_ps(s + 8, m.s_hi);
  _mm256_storeu_ps(q, m.q_lo);
  _mm256_storeu_ps(q + 8, m.q_hi);
  finish_block(s, q, x, i, n, c, sum, square);
}

SWARMLAB_AVX2 void block_moments_avx2(const float* x, std::size_t n, float centre, float* sums, float* squares) {
  constexpr std::size_t kGroup = 2;
  const __m256 c = _mm256_set1_ps(centre);
  std::size_t b = 0;
  for (; (b + kGroup) * kSumBlock <= n; b += kGroup) {
    const float* p = x + b * kSumBlock;
    Moments8 m[kGroup];
    for (auto& g : m) g.s_lo = g.s_hi = g.q_lo = g.q_hi = _mm256_setzero_ps();
    for (std::size_t i = 0; i < kSumBlock; i += kLanes)
      for (std::size_t g = 0; g < kGroup; ++g) {
        add8(m[g].s_lo, m[g].q_lo, p + g * kSumBlock + i, c);
        add8(m[g].s_hi, m[g].q_hi, p + g * kSumBlock + i + 8, c);
      }
    for (std::size_t g = 0; g < kGroup; ++g) {
      sums[b + g] = fold_lanes(m[g].s_lo, m[g].s_hi);
      squares[b + g] = fold_lanes(m[g].q_lo, m[g].q_hi);
    }
  }
  for (; b * kSumBlock < n; ++b) {
    const float* p = x + b * kSumBlock;
    const std::size_t len = std::min(kSumBlock, n - b * kSumBlock);
    Moments8 m{_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    std::size_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      add8(m.s_lo, m.q_lo, p + i, c);
      add8(m.s_hi, m.q_hi, p + i + 8, c);
    }
    finish8(m, p, i, len, centre, sums + b, squares + b);
  }
}

constexpr Kernels kAvx2{"avx2",          to_half_avx2,   from_half_avx2, to_half_scaled_avx2,
                        from_half_scaled_avx2, to_level_avx2, from_level_avx2, block_moments_avx2};

// ---- AVX-512F build: sixteen lanes at a time; a block's 16 sum lanes are one register. ----
#define SWARMLAB_AVX512 __attribute__((target("avx512f")))
// GCC 12's AVX-512 intrinsics trip -Wmaybe-uninitialized on their own _mm512_undefined_*() (GCC
// bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

SWARMLAB_AVX512 inline void store_half16(std::uint8_t* out, __m512 v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtps_ph(v, kRoundNearest));
}
SWARMLAB_AVX512 inline __m512 load_half16(const std::uint8_t* in) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in)));
}

SWARMLAB_AVX512 void to_half_avx512(const float* in, std::size_t n, std::uint8_t* out) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_loadu_ps(in + i), b = _mm512_loadu_ps(in + i + 16);
    store_half16(out + 2 * i, a);
    store_half16(out + 2 * i + 32, b);
  }
  for (; i + 16 <= n; i += 16) store_half16(out + 2 * i, _mm512_loadu_ps(in + i));
  to_half_scalar(in + i, n - i, out + 2 * i);
}

SWARMLAB_AVX512 void from_half_avx512(const std::uint8_t* in, std::size_t n, float* out) {
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = load_half16(in + 2 * i), b = load_half16(in + 2 * i + 32);
    _mm512_storeu_ps(out + i, a);
    _mm512_storeu_ps(out + i + 16, b);
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, load_half16(in + 2 * i));
  from_half_scalar(in + 2 * i, n - i, out + i);
}

SWARMLAB_AVX512 void to_half_scaled_avx512(const float* in, std::size_t n, float mean, float inv, std::uint8_t* out) {
  const __m512 m = _mm512_set1_ps(mean), s = _mm512_set1_ps(inv);
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 a = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(in + i), m), s);
    const __m512 b = _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(in + i + 16), m), s);
    store_half16(out + 2 * i, a);
    store_half16(out + 2 * i + 32, b);
  }
  for (; i + 16 <= n; i += 16) store_half16(out + 2 * i, _mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(in + i), m), s));
  to_half_scaled_scalar(in + i, n - i, mean, inv, out + 2 * i);
}

SWARMLAB_AVX512 void from_half_scaled_avx512(const std::uint8_t* in, std::size_t n, float mean, float scale,
                                             float* out) {
  const __m512 m = _mm512_set1_ps(mean), s = _mm512_set1_ps(scale);
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    _mm512_storeu_ps(out + i, _mm512_add_ps(m, _mm512_mul_ps(s, load_half16(in + 2 * i))));
    _mm512_storeu_ps(out + i + 16, _mm512_add_ps(m, _mm512_mul_ps(s, load_half16(in + 2 * i + 32))));
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(out + i, _mm512_add_ps(m, _mm512_mul_ps(s, load_half16(in + 2 * i))));
  from_half_scaled_scalar(in + 2 * i, n - i, mean, scale, out + i);
}

SWARMLAB_AVX512 void to_level_avx512(const float* in, std::size_t n, float low, float inv, std::uint8_t* out) {
  const __m512 l = _mm512_set1_ps(low), s = _mm512_set1_ps(inv), half = _mm512_set1_ps(0.5f);
  const __m512 nan_level = _mm512_set1_ps(128.0f), top = _mm512_set1_ps(kTopLevel);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 t = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(_mm512_loadu_ps(in + i), l), s), half);
    t = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q), t, nan_level);
    t = _mm512_min_ps(_mm512_max_ps(t, half), top);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(t)));
  }
  to_level_scalar(in + i, n - i, low, inv, out + i);
}

SWARMLAB_AVX512 void from_level_avx512(const std::uint8_t* in, std::size_t n, float low, float step, float* out) {
  const __m512d l = _mm512_set1_pd(low), s = _mm512_set1_pd(step);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i k = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i)));
    const __m512d lo = _mm512_add_pd(l, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(k)), s));
    const __m512d hi = _mm512_add_pd(l, _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(k, 1)), s));
    _mm256_storeu_ps(out + i, _mm512_cvtpd_ps(lo));
    _mm256_storeu_ps(out + i + 8, _mm512_cvtpd_ps(hi));
  }
  from_level_scalar(in + i, n - i, low, step, out + i);
}

// A block's 16 lanes folded as lane_tree() does: k + k+8 is the sum of the two 256-bit halves.
SWARMLAB_AVX512 inline float fold16(__m512 v) {
  const __m256 lo = _mm512_castps512_ps256(v);
  const __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  const __m256 v8 = _mm256_add_ps(lo, hi);
  const __m128 v4 = _mm_add_ps(_mm256_castps256_ps128(v8), _mm256_extractf128_ps(v8, 1));
  const __m128 v2 = _mm_add_ps(v4, _mm_movehl_ps(v4, v4));
  return _mm_cvtss_f32(_mm_add_ss(v2, _mm_shuffle_ps(v2, v2, 1)));
}

SWARMLAB_AVX512 inline void add16(__m512& s, __m512& q, const float* x, __m512 c) {
  const __m512 v = _mm512_loadu_ps(x);
  s = _mm512_add_ps(s, v);
  const __m512 d = _mm512_sub_ps(v, c);
  q = _mm512_fmadd_ps(d, d, q);
}

// Four full blocks go through the loop together: eight independent chains.
SWARMLAB_AVX512 void block_moments_avx512(const float* x, std::size_t n, float centre, float* sums, float* squares) {
  constexpr std::size_t kGroup = 4;
  const __m512 c = _mm512_set1_ps(centre);
  std::size_t b = 0;
  for (; (b + kGroup) * kSumBlock <= n; b += kGroup) {
    const float* p = x + b * kSumBlock;
    __m512 s[kGroup], q[kGroup];
    for (std::size_t g = 0; g < kGroup; ++g) s[g] = q[g] = _mm512_setzero_ps();
    for (std::size_t i = 0; i < kSumBlock; i += kLanes)
      for (std::size_t g = 0; g < kGroup; ++g) add16(s[g], q[g], p + g * kSumBlock + i, c);
    for (std::size_t g = 0; g < kGroup; ++g) {
      sums[b + g] = fold16(s[g]);
      squares[b + g] = fold16(q[g]);
    }
  }
  for (; b * kSumBlock < n; ++b) {
    const float* p = x + b * kSumBlock;
    const std::size_t len = std::min(kSumBlock, n - b * kSumBlock);
    __m512 s = _mm512_setzero_ps(), q = _mm512_setzero_ps();
    std::size_t i = 0;
    for (; i + kLanes <= len; i += kLanes) add16(s, q, p + i, c);
    if (i == len) {
      sums[b] = fold16(s);
      squares[b] = fold16(q);
      continue;
    }
    float ls[kLanes], lq[kLanes];
    _mm512_storeu_ps(ls, s);
    _mm512_storeu_ps(lq, q);
    finish_block(ls, lq, p, i, len, centre, sums + b, squares + b);
  }
}

constexpr Kernels kAvx512{"avx512",          to_half_avx512,   from_half_avx512, to_half_scaled_avx512,
                          from_half_scaled_avx512, to_level_avx512, from_level_avx512, block_moments_avx512};
#pragma GCC diagnostic pop
#endif

}  // namespace

const Kernels& scalar_kernels() { return kScalar; }

const Kernels* avx2_kernels() {
#ifdef SWARMLAB_CODEC_X86
  static const bool supported = [] {
    __builtin_cpu_init();
    // F16C from CPUID leaf 1 (ECX bit 29): not every compiler's __builtin_cpu_supports knows it.
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29));
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
  }();
  return supported ? &kAvx2 : nullptr;
#else
  return nullptr;
#endif
}

const Kernels* avx512_kernels() {
#ifdef SWARMLAB_CODEC_X86
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
  }();
  return supported ? &kAvx512 : nullptr;
#else
  return nullptr;
#endif
}

const Kernels& kernels() {
  static const Kernels& chosen =
      avx512_kernels() ? *avx512_kernels() : avx2_kernels() ? *avx2_kernels() : scalar_kernels();
  return chosen;
}

}  // namespace swarmlab::core::codec::detail
