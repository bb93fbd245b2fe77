#include "core/codec/codec.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/codec/half.h"
#include "core/wire.h"

namespace swarmlab::core::codec {
namespace {

constexpr std::size_t kHeaderBytes = 8;  // two float32 (fp16-scaled and uint8)
// Elements converted per block: the conversion loops run on small local arrays the compiler can
// vectorise, and the bytes move with one memcpy per block.
constexpr std::size_t kBlock = 512;
constexpr double kRangeSigmas = 6.0;  // uint8 covers mean ± 3σ
constexpr int kLevels = 256;

struct Moments {
  double mean = 0.0;
  double sigma = 0.0;  // population standard deviation
};

// Mean and σ over the finite entries (inf/NaN would poison both). They only choose the scale and
// offset written in the header, which decoding then uses as written, so speed matters more than
// the last bits: each block of kBlock values is summed in float, in kLanes independent lanes the
// compiler turns into SIMD, and the block sums are accumulated in double. A non-finite total (a
// non-finite entry, or float overflow) falls back to a filtered double loop.
constexpr std::size_t kLanes = 16;

template <typename Term>
double blocked_sum(std::span<const float> in, Term term) {
  double total = 0.0;
  for (std::size_t base = 0; base < in.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, in.size() - base);
    const float* x = in.data() + base;
    float lane[kLanes] = {};
    std::size_t i = 0;
    for (; i + kLanes <= len; i += kLanes)
      for (std::size_t k = 0; k < kLanes; ++k) lane[k] += term(x[i + k]);
    for (; i < len; ++i) lane[0] += term(x[i]);
    float block = 0.0f;
    for (float v : lane) block += v;
    total += block;
  }
  return total;
}

Moments moments(std::span<const float> in) {
  if (in.empty()) return {};
  const double n = static_cast<double>(in.size());
  const double mean = blocked_sum(in, [](float x) { return x; }) / n;
  const float mean_f = static_cast<float>(mean);
  const double sq = blocked_sum(in, [mean_f](float x) { return (x - mean_f) * (x - mean_f); });
  const double m2 = static_cast<double>(mean_f) - mean;  // the blocked sum is centred on mean_f
  if (std::isfinite(mean) && std::isfinite(sq)) return {mean, std::sqrt(std::max(0.0, sq / n - m2 * m2))};

  double sum = 0.0, count = 0.0;
  for (float x : in)
    if (std::isfinite(x)) {
      sum += x;
      count += 1.0;
    }
  if (count == 0.0) return {};
  const double finite_mean = sum / count;
  double dev = 0.0;
  for (float x : in)
    if (std::isfinite(x)) dev += (x - finite_mean) * (x - finite_mean);
  return {finite_mean, std::sqrt(dev / count)};
}

float clamp_to_float(double v) { return static_cast<float>(std::clamp(v, -double(FLT_MAX), double(FLT_MAX))); }

std::uint8_t* grow(std::vector<std::uint8_t>& out, std::size_t bytes) {
  const std::size_t old = out.size();
  out.resize(old + bytes);
  return out.data() + old;
}

void put_f32(std::uint8_t* p, float v) { std::memcpy(p, &v, 4); }
float get_f32(const std::uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

void encode_fp16(std::span<const float> in, std::uint8_t* dst) {
  std::uint16_t buf[kBlock];
  for (std::size_t base = 0; base < in.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, in.size() - base);
    const float* src = in.data() + base;
    for (std::size_t i = 0; i < len; ++i) buf[i] = float_to_half(src[i]);
    std::memcpy(dst + 2 * base, buf, 2 * len);
  }
}

void decode_fp16(const std::uint8_t* src, std::span<float> out) {
  std::uint16_t buf[kBlock];
  for (std::size_t base = 0; base < out.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, out.size() - base);
    std::memcpy(buf, src + 2 * base, 2 * len);
    float* dst = out.data() + base;
    for (std::size_t i = 0; i < len; ++i) dst[i] = half_to_float(buf[i]);
  }
}

// fp16 of (x − mean)/σ: the values fill the well-resolved middle of the half range whatever their
// magnitude, so tiny gradients do not flush to subnormals and huge ones do not overflow. No clamp
// is needed: a finite entry has |z| ≤ √n (σ is the population σ over the finite entries), far
// below the half overflow at 65520 for any part under 2^32 elements. inf/NaN pass through.
void encode_fp16_scaled(std::span<const float> in, std::uint8_t* dst) {
  const Moments m = moments(in);
  const float mean = clamp_to_float(m.mean);
  float scale = static_cast<float>(std::min(m.sigma, double(FLT_MAX)));
  if (!(scale >= FLT_MIN)) scale = 1.0f;  // constant or empty part: nothing to scale
  put_f32(dst, mean);
  put_f32(dst + 4, scale);
  dst += kHeaderBytes;
  const float inv = 1.0f / scale;
  std::uint16_t buf[kBlock];
  for (std::size_t base = 0; base < in.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, in.size() - base);
    const float* src = in.data() + base;
    for (std::size_t i = 0; i < len; ++i) buf[i] = float_to_half((src[i] - mean) * inv);
    std::memcpy(dst + 2 * base, buf, 2 * len);
  }
}

void decode_fp16_scaled(const std::uint8_t* src, std::span<float> out) {
  const float mean = get_f32(src);
  const float scale = get_f32(src + 4);
  if (!std::isfinite(mean) || !std::isfinite(scale) || !(scale > 0.0f))
    throw DecodeError("fp16-scaled: invalid header (mean " + std::to_string(mean) + ", scale " +
                      std::to_string(scale) + ")");
  src += kHeaderBytes;
  std::uint16_t buf[kBlock];
  for (std::size_t base = 0; base < out.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, out.size() - base);
    std::memcpy(buf, src + 2 * base, 2 * len);
    float* dst = out.data() + base;
    for (std::size_t i = 0; i < len; ++i) dst[i] = mean + scale * half_to_float(buf[i]);
  }
}

// 256 evenly spaced levels covering mean ± 3σ; each value goes to the nearest level, values
// outside the range to the end levels (±inf included). NaN has no level: it goes to the middle
// one, next to the mean. A σ too small for a normal float step collapses every value to the mean.
void encode_uint8(std::span<const float> in, std::uint8_t* dst) {
  const Moments m = moments(in);
  const float low = clamp_to_float(m.mean - kRangeSigmas / 2 * m.sigma);
  float step = static_cast<float>(kRangeSigmas * m.sigma / (kLevels - 1));
  if (!(step >= FLT_MIN)) step = 0.0f;
  put_f32(dst, low);
  put_f32(dst + 4, step);
  dst += kHeaderBytes;
  const float inv = step > 0.0f ? 1.0f / step : 0.0f;
  const float top = static_cast<float>(kLevels - 1) + 0.5f;
  for (std::size_t i = 0; i < in.size(); ++i) {
    float t = (in[i] - low) * inv + 0.5f;  // truncating t rounds to the nearest level
    t = t == t ? t : 128.0f;                // NaN
    t = std::min(std::max(t, 0.5f), top);   // written so that the loop vectorises
    dst[i] = static_cast<std::uint8_t>(static_cast<int>(t));
  }
}

void decode_uint8(const std::uint8_t* src, std::span<float> out) {
  const float low = get_f32(src);
  const float step = get_f32(src + 4);
  if (!std::isfinite(low) || !std::isfinite(step) || !(step >= 0.0f))
    throw DecodeError("uint8: invalid header (low " + std::to_string(low) + ", step " + std::to_string(step) + ")");
  src += kHeaderBytes;
  float level[kLevels];
  for (int k = 0; k < kLevels; ++k) level[k] = static_cast<float>(double(low) + k * double(step));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = level[src[i]];
}

}  // namespace

Codec parse_codec(std::string_view text) {
  if (const auto c = parse_name(kCodecNames, text)) return *c;
  throw std::invalid_argument("unknown codec '" + std::string(text) +
                              "' (expected fp32, fp16, fp16-scaled or uint8)");
}

std::size_t encoded_size(Codec codec, std::size_t n) {
  switch (codec) {
    case Codec::Fp32: return 4 * n;
    case Codec::Fp16: return 2 * n;
    case Codec::Fp16Scaled: return kHeaderBytes + 2 * n;
    case Codec::Uint8Uniform: return kHeaderBytes + n;
  }
  throw std::invalid_argument("unknown codec value");
}

double bytes_per_element(Codec codec) {
  switch (codec) {
    case Codec::Fp32: return 4.0;
    case Codec::Fp16:
    case Codec::Fp16Scaled: return 2.0;
    case Codec::Uint8Uniform: return 1.0;
  }
  throw std::invalid_argument("unknown codec value");
}

void encode(Codec codec, std::span<const float> in, std::vector<std::uint8_t>& out) {
  std::uint8_t* dst = grow(out, encoded_size(codec, in.size()));
  switch (codec) {
    case Codec::Fp32:
      if (!in.empty()) std::memcpy(dst, in.data(), 4 * in.size());
      return;
    case Codec::Fp16: return encode_fp16(in, dst);
    case Codec::Fp16Scaled: return encode_fp16_scaled(in, dst);
    case Codec::Uint8Uniform: return encode_uint8(in, dst);
  }
}

void decode(Codec codec, std::span<const std::uint8_t> in, std::span<float> out) {
  const std::size_t expected = encoded_size(codec, out.size());
  if (in.size() != expected)
    throw DecodeError(std::string(name(codec)) + ": expected " + std::to_string(expected) + " bytes for " +
                      std::to_string(out.size()) + " values, got " + std::to_string(in.size()));
  switch (codec) {
    case Codec::Fp32:
      if (!out.empty()) std::memcpy(out.data(), in.data(), 4 * out.size());
      return;
    case Codec::Fp16: return decode_fp16(in.data(), out);
    case Codec::Fp16Scaled: return decode_fp16_scaled(in.data(), out);
    case Codec::Uint8Uniform: return decode_uint8(in.data(), out);
  }
}

}  // namespace swarmlab::core::codec
