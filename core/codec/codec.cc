#include "core/codec/codec.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/codec/kernels.h"
#include "core/wire.h"

namespace swarmlab::core::codec {

namespace detail {

// Mean and σ over the finite entries (inf/NaN would poison both). They only choose the scale and
// offset written in the header, which decoding then uses as written. One pass over memory, one
// over each block: a block of detail::kSumBlock values gives, in float lanes (SIMD), its sum and
// its squared deviations from a shared centre, the mean of the steps already summed (the first
// step is summed once more, to centre it on its own mean). A block's M2 is then its squares less
// n_b (centre − mean_b)², and the blocks' moments are combined in double. Every kernel build gives
// the same bits. A non-finite sum (a non-finite entry, or float overflow) falls back to a filtered
// double loop.
Moments moments(const Kernels& k, std::span<const float> in) {
  if (in.empty()) return {};
  constexpr std::size_t kBlocks = 16;  // blocks per step: 32 KiB of input
  constexpr std::size_t kStep = kBlocks * detail::kSumBlock;
  constexpr double kInvBlock = 1.0 / detail::kSumBlock;  // a power of two: exact
  float sums[kBlocks], squares[kBlocks];
  // Totals in double: Σx, and Σ over blocks of (the block's M2 + n_b (mean_b − ref)²), where ref
  // is the first block's mean; then M2 = that − n (mean − ref)².
  double count = 0.0, sum = 0.0, spread = 0.0, ref = 0.0;
  bool first = true, finite = true;
  // Last step first: the encoding pass that follows starts at the front, which is then the part of
  // the input most recently read (still in cache when the input is larger than the caches).
  for (std::size_t step = (in.size() + kStep - 1) / kStep; step-- > 0 && finite;) {
    const std::size_t base = step * kStep;
    const std::size_t len = std::min(kStep, in.size() - base);
    const std::size_t blocks = (len + detail::kSumBlock - 1) / detail::kSumBlock;
    const float* x = in.data() + base;
    float centre = 0.0f;
    if (first) {
      k.block_moments(x, len, 0.0f, sums, squares);
      double s = 0.0;
      for (std::size_t b = 0; b < blocks; ++b) s += static_cast<double>(sums[b]);
      centre = static_cast<float>(s / static_cast<double>(len));
    } else {
      centre = static_cast<float>(sum / count);
    }
    // No software prefetch: it measured slower on 1 MiB and no faster on 16 or 64 MiB.
    k.block_moments(x, len, centre, sums, squares);
    for (std::size_t b = 0; b < blocks; ++b) {
      finite = finite && std::isfinite(sums[b]) && std::isfinite(squares[b]);
      const std::size_t len_b = std::min(detail::kSumBlock, len - b * detail::kSumBlock);
      const double n_b = static_cast<double>(len_b);
      const double mean_b = len_b == detail::kSumBlock ? static_cast<double>(sums[b]) * kInvBlock
                                                       : static_cast<double>(sums[b]) / n_b;
      const double off = static_cast<double>(centre) - mean_b;
      const double m2_b = std::max(0.0, static_cast<double>(squares[b]) - n_b * off * off);
      if (first) {
        ref = mean_b;
        first = false;
      }
      const double d = mean_b - ref;
      count += n_b;
      sum += static_cast<double>(sums[b]);
      spread += m2_b + n_b * d * d;
    }
  }
  if (finite) {
    const double mean = sum / count, d = mean - ref;
    return {mean, std::sqrt(std::max(0.0, spread - count * d * d) / count)};
  }

  double finite_sum = 0.0, finite_count = 0.0;
  for (float x : in)
    if (std::isfinite(x)) {
      finite_sum += x;
      finite_count += 1.0;
    }
  if (finite_count == 0.0) return {};
  const double finite_mean = finite_sum / finite_count;
  double dev = 0.0;
  for (float x : in)
    if (std::isfinite(x)) dev += (x - finite_mean) * (x - finite_mean);
  return {finite_mean, std::sqrt(dev / finite_count)};
}

}  // namespace detail

namespace {

using detail::Kernels;
using detail::kLevels;
using detail::Moments;
using detail::moments;

constexpr std::size_t kHeaderBytes = 8;  // two float32 (fp16-scaled and uint8)
// Elements encoded per step: converted into a local buffer (it stays in L1), then appended.
constexpr std::size_t kBlock = 2048;
constexpr double kRangeSigmas = 6.0;  // uint8 covers mean ± 3σ

float clamp_to_float(double v) { return static_cast<float>(std::clamp(v, -double(FLT_MAX), double(FLT_MAX))); }

// Appends `bytes` to `out` with geometric growth and no zero-filling: each block is produced in
// a local buffer and appended with one copy.
void make_room(std::vector<std::uint8_t>& out, std::size_t bytes) {
  const std::size_t need = out.size() + bytes;
  if (need > out.capacity()) out.reserve(std::max(need, 2 * out.capacity()));
}

void append(std::vector<std::uint8_t>& out, const std::uint8_t* p, std::size_t bytes) {
  out.insert(out.end(), p, p + bytes);
}

void put_header(std::vector<std::uint8_t>& out, float a, float b) {
  std::uint8_t h[kHeaderBytes];
  std::memcpy(h, &a, 4);
  std::memcpy(h + 4, &b, 4);
  append(out, h, kHeaderBytes);
}

float get_f32(const std::uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

void encode_fp16(const Kernels& k, std::span<const float> in, std::vector<std::uint8_t>& out) {
  std::uint8_t buf[2 * kBlock];
  for (std::size_t base = 0; base < in.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, in.size() - base);
    k.to_half(in.data() + base, len, buf);
    append(out, buf, 2 * len);
  }
}

// fp16 of (x − mean)/σ: the values fill the well-resolved middle of the half range whatever their
// magnitude, so tiny gradients do not flush to subnormals and huge ones do not overflow. No clamp
// is needed: a finite entry has |z| ≤ √n (σ is the population σ over the finite entries), far
// below the half overflow at 65520 for any part under 2^32 elements. inf/NaN pass through.
void encode_fp16_scaled(const Kernels& k, std::span<const float> in, std::vector<std::uint8_t>& out) {
  const Moments m = moments(k, in);
  const float mean = clamp_to_float(m.mean);
  float scale = static_cast<float>(std::min(m.sigma, double(FLT_MAX)));
  if (!(scale >= FLT_MIN)) scale = 1.0f;  // constant or empty part: nothing to scale
  put_header(out, mean, scale);
  const float inv = 1.0f / scale;
  std::uint8_t buf[2 * kBlock];
  for (std::size_t base = 0; base < in.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, in.size() - base);
    k.to_half_scaled(in.data() + base, len, mean, inv, buf);
    append(out, buf, 2 * len);
  }
}

void decode_fp16_scaled(const Kernels& k, const std::uint8_t* src, std::span<float> out) {
  const float mean = get_f32(src);
  const float scale = get_f32(src + 4);
  if (!std::isfinite(mean) || !std::isfinite(scale) || !(scale > 0.0f))
    throw DecodeError("fp16-scaled: invalid header (mean " + std::to_string(mean) + ", scale " +
                      std::to_string(scale) + ")");
  k.from_half_scaled(src + kHeaderBytes, out.size(), mean, scale, out.data());
}

// 256 evenly spaced levels covering mean ± 3σ; each value goes to the nearest level, values
// outside the range to the end levels (±inf included). NaN has no level: it goes to the middle
// one, next to the mean. A σ too small for a normal float step collapses every value to the mean.
void encode_uint8(const Kernels& k, std::span<const float> in, std::vector<std::uint8_t>& out) {
  const Moments m = moments(k, in);
  const float low = clamp_to_float(m.mean - kRangeSigmas / 2 * m.sigma);
  float step = static_cast<float>(kRangeSigmas * m.sigma / (kLevels - 1));
  if (!(step >= FLT_MIN)) step = 0.0f;
  put_header(out, low, step);
  const float inv = step > 0.0f ? 1.0f / step : 0.0f;
  std::uint8_t buf[kBlock];
  for (std::size_t base = 0; base < in.size(); base += kBlock) {
    const std::size_t len = std::min(kBlock, in.size() - base);
    k.to_level(in.data() + base, len, low, inv, buf);
    append(out, buf, len);
  }
}

void decode_uint8(const Kernels& k, const std::uint8_t* src, std::span<float> out) {
  const float low = get_f32(src);
  const float step = get_f32(src + 4);
  if (!std::isfinite(low) || !std::isfinite(step) || !(step >= 0.0f))
    throw DecodeError("uint8: invalid header (low " + std::to_string(low) + ", step " + std::to_string(step) + ")");
  k.from_level(src + kHeaderBytes, out.size(), low, step, out.data());
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

std::uint64_t elements_fitting(Codec codec, std::uint64_t bytes) {
  // encoded_size is affine in n (a fixed header plus a per-element cost); search the largest fit.
  const std::size_t header = encoded_size(codec, 0);
  const std::size_t per_element = encoded_size(codec, 1) - header;
  if (bytes <= header) throw std::invalid_argument("part size too small for the codec header");
  std::uint64_t n = (bytes - header) / per_element;
  while (n > 1 && encoded_size(codec, n) > bytes) --n;
  return std::max<std::uint64_t>(n, 1);
}

std::optional<Codec> codec_from_byte(std::uint8_t byte) {
  if (byte > static_cast<std::uint8_t>(Codec::Uint8Uniform)) return std::nullopt;
  return static_cast<Codec>(byte);
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

namespace detail {

void encode_with(const Kernels& k, Codec codec, std::span<const float> in, std::vector<std::uint8_t>& out) {
  const std::size_t bytes = encoded_size(codec, in.size());
  make_room(out, bytes);
  switch (codec) {
    case Codec::Fp32: {
      const auto* p = reinterpret_cast<const std::uint8_t*>(in.data());
      return append(out, p, bytes);
    }
    case Codec::Fp16: return encode_fp16(k, in, out);
    case Codec::Fp16Scaled: return encode_fp16_scaled(k, in, out);
    case Codec::Uint8Uniform: return encode_uint8(k, in, out);
  }
}

void decode_with(const Kernels& k, Codec codec, std::span<const std::uint8_t> in, std::span<float> out) {
  const std::size_t expected = encoded_size(codec, out.size());
  if (in.size() != expected)
    throw DecodeError(std::string(name(codec)) + ": expected " + std::to_string(expected) + " bytes for " +
                      std::to_string(out.size()) + " values, got " + std::to_string(in.size()));
  switch (codec) {
    case Codec::Fp32:
      if (!out.empty()) std::memcpy(out.data(), in.data(), 4 * out.size());
      return;
    case Codec::Fp16: return k.from_half(in.data(), out.size(), out.data());
    case Codec::Fp16Scaled: return decode_fp16_scaled(k, in.data(), out);
    case Codec::Uint8Uniform: return decode_uint8(k, in.data(), out);
  }
}

}  // namespace detail

void encode(Codec codec, std::span<const float> in, std::vector<std::uint8_t>& out) {
  detail::encode_with(detail::kernels(), codec, in, out);
}

void decode(Codec codec, std::span<const std::uint8_t> in, std::span<float> out) {
  detail::decode_with(detail::kernels(), codec, in, out);
}

}  // namespace swarmlab::core::codec
