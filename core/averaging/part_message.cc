#include "core/averaging/part_message.h"

#include <stdexcept>
#include <string>

#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::core::averaging {
Message encode_part(const PartHeader& h, std::span<const float> values, bool virtual_payload) {
  Message m;
  const std::size_t payload = codec::encoded_size(h.codec, h.elements);
  m.bytes.reserve(32 + (virtual_payload ? 0 : payload));
  Writer w(m.bytes);
  w.u8(static_cast<std::uint8_t>(ServiceId::Averaging));
  w.u8(static_cast<std::uint8_t>(h.kind));
  w.u64(h.round_id);
  w.u32(h.part);
  w.f64(h.weight);
  w.u32(h.elements);
  w.u8(static_cast<std::uint8_t>(h.codec));
  w.u8(virtual_payload ? 0 : 1);
  if (virtual_payload) {
    m.virtual_bytes = payload;
  } else {
    if (values.size() != h.elements) throw std::logic_error("encode_part: values do not match the header");
    codec::encode(h.codec, values, m.bytes);
  }
  return m;
}

DecodedPart decode_part(const Message& message) {
  Reader r(message.bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::Averaging)) throw DecodeError("not an averaging message");
  DecodedPart d;
  const std::uint8_t kind = r.u8();
  if (kind != 1 && kind != 2) throw DecodeError("unknown averaging message kind " + std::to_string(kind));
  d.header.kind = static_cast<PartKind>(kind);
  d.header.round_id = r.u64();
  d.header.part = r.u32();
  d.header.weight = r.f64();
  if (!(d.header.weight >= 0) || d.header.weight > 1e300) throw DecodeError("invalid weight");
  d.header.elements = r.u32();
  const std::uint8_t c = r.u8();
  const auto codec = codec::codec_from_byte(c);
  if (!codec) throw DecodeError("unknown codec " + std::to_string(c));
  d.header.codec = *codec;
  const std::uint8_t present = r.u8();
  if (present > 1) throw DecodeError("invalid payload flag");
  d.has_payload = present == 1;
  const std::size_t payload = codec::encoded_size(d.header.codec, d.header.elements);
  if (d.has_payload) {
    if (payload > kMaxMessageBytes) throw DecodeError("payload exceeds the message size limit");
    d.payload = r.raw(payload);
    if (message.virtual_bytes != 0) throw DecodeError("both real and virtual payload");
  } else if (message.virtual_bytes != payload) {
    throw DecodeError("virtual payload of " + std::to_string(message.virtual_bytes) + " bytes, header implies " +
                      std::to_string(payload));
  }
  r.finish();
  return d;
}

}  // namespace swarmlab::core::averaging
