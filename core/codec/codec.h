#pragma once
// Wire compression of float vectors for averaging (docs/dedloc.md §4): fp32 (none), fp16, fp16 with
// mean/std scaling, and 8-bit uniform quantisation over a 6σ range. One call encodes one part; any
// per-part header (scale, offset) is counted in encoded_size, which is exactly what encode() appends
// and what the simulator charges for the part.
//
// Formats (little-endian):
//   fp32         n × float32
//   fp16         n × binary16 (round to nearest even; |x| ≥ 65520 → ±inf)
//   fp16-scaled  float32 mean, float32 scale, n × binary16 of (x − mean) / scale
//   uint8        float32 low, float32 step, n × uint8 level k; x ≈ low + k·step, k ∈ [0, 255]
// The exact numerics (which mean, which σ, how non-finite values travel) are in codec.cc.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/names.h"

namespace swarmlab::core::codec {

enum class Codec { Fp32, Fp16, Fp16Scaled, Uint8Uniform };

// How codecs are named in scenarios ("wire_precision"), on the command line and in results.
inline constexpr Named<Codec> kCodecNames[] = {
    {Codec::Fp32, "fp32"}, {Codec::Fp16, "fp16"}, {Codec::Fp16Scaled, "fp16-scaled"}, {Codec::Uint8Uniform, "uint8"}};

inline std::string_view name(Codec codec) { return name_of(kCodecNames, codec); }
// The inverse of name(); throws std::invalid_argument on an unknown name.
Codec parse_codec(std::string_view text);

// Bytes that encode() appends for n floats, header included.
std::size_t encoded_size(Codec codec, std::size_t n);
// Asymptotic bytes per element (header ignored), for planning.
double bytes_per_element(Codec codec);
// The most elements (at least 1) whose encoding fits in `bytes`: what one streamed part carries.
// Throws std::invalid_argument when `bytes` cannot hold the codec's header.
std::uint64_t elements_fitting(Codec codec, std::uint64_t bytes);
// The codec a wire byte names; nullopt for an unknown one (decoders reject the message).
std::optional<Codec> codec_from_byte(std::uint8_t byte);

// Appends the encoding of `in` to `out`.
void encode(Codec codec, std::span<const float> in, std::vector<std::uint8_t>& out);
// Decodes exactly out.size() floats. Throws core::DecodeError (core/wire.h) unless `in` holds
// exactly encoded_size(codec, out.size()) bytes with a valid header; never reads out of range.
void decode(Codec codec, std::span<const std::uint8_t> in, std::span<float> out);

}  // namespace swarmlab::core::codec
