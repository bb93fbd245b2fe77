#pragma once
// The two messages of a butterfly round: a sender's part of a reducer's span, and the reducer's
// averaged part coming back. Layout (core/wire.h, little-endian):
//   u8 service (Averaging) | u8 kind | u64 round | u32 part | f64 weight | u32 elements | u8 codec |
//   u8 payload_present | payload (codec::encoded_size(codec, elements) bytes, when present)
// In the simulator the payload may be virtual: the message then carries the header only and
// charges the payload's exact encoded size as virtual bytes.
#include <cstdint>
#include <span>

#include "core/codec/codec.h"
#include "core/message.h"

namespace swarmlab::core::averaging {

enum class PartKind : std::uint8_t { Part = 1, Averaged = 2 };

struct PartHeader {
  PartKind kind = PartKind::Part;
  std::uint64_t round_id = 0;
  std::uint32_t part = 0;
  double weight = 0;            // the sender's weight (Part); the total weight averaged (Averaged)
  std::uint32_t elements = 0;
  codec::Codec codec = codec::Codec::Fp32;
};

struct DecodedPart {
  PartHeader header;
  bool has_payload = false;
  std::span<const std::uint8_t> payload;  // views the message's bytes
};

// Encodes a part. With `values` empty the payload is virtual (simulator, sizes only); otherwise
// values.size() must equal header.elements.
Message encode_part(const PartHeader& header, std::span<const float> values, bool virtual_payload);

// Throws core::DecodeError on any malformed input (wrong service or kind, unknown codec, payload of
// the wrong size, trailing bytes, a virtual payload whose size disagrees with the header).
DecodedPart decode_part(const Message& message);

}  // namespace swarmlab::core::averaging
