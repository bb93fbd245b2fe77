#include "core/allreduce/chunk_message.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::core::allreduce {
Message encode_chunk(const ChunkHeader& h, std::span<const float> values) {
  Message m;
  const bool part = h.kind == ChunkKind::Part;
  const std::size_t payload = part ? codec::encoded_size(h.codec, h.elements) : 0;
  m.bytes.reserve(32 + 10 * h.blocks.size() + (values.empty() ? 0 : payload));
  Writer w(m.bytes);
  w.u8(static_cast<std::uint8_t>(ServiceId::AllReduce));
  w.u8(static_cast<std::uint8_t>(h.kind));
  w.varint(h.round_id);
  w.varint(h.step);
  w.varint(h.from_group);
  if (!part) return m;
  if ((h.part == 0) != !h.blocks.empty()) throw std::logic_error("encode_chunk: part 0, and only part 0, carries block tags");
  w.varint(h.part);
  w.varint(h.parts);
  w.varint(h.first_element);
  w.varint(h.elements);
  w.u8(static_cast<std::uint8_t>(h.codec));
  w.u8(values.empty() ? 0 : 1);
  if (h.part == 0) {
    w.varint(h.blocks.size());
    for (const BlockTag& t : h.blocks) {
      w.f64(t.weight);
      w.varint(2 * std::uint64_t{t.groups} + (t.final ? 1 : 0));
    }
  }
  if (values.empty()) {
    m.virtual_bytes = payload;
  } else {
    if (values.size() != h.elements) throw std::logic_error("encode_chunk: values do not match the header");
    codec::encode(h.codec, values, m.bytes);
  }
  return m;
}

DecodedChunk decode_chunk(const Message& message) {
  Reader r(message.bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::AllReduce)) throw DecodeError("not an all-reduce message");
  DecodedChunk d;
  ChunkHeader& h = d.header;
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 3) throw DecodeError("unknown all-reduce message kind " + std::to_string(kind));
  h.kind = static_cast<ChunkKind>(kind);
  h.round_id = r.varint();
  const std::uint64_t step = r.varint(), from = r.varint();
  if (step >= kMaxSteps) throw DecodeError("step out of range");
  if (from >= kMaxParticipants) throw DecodeError("group out of range");
  h.step = static_cast<std::uint32_t>(step);
  h.from_group = static_cast<std::uint32_t>(from);
  if (h.kind != ChunkKind::Part) {
    r.finish();
    if (message.virtual_bytes != 0) throw DecodeError("a pull or busy carries no payload");
    return d;
  }
  const std::uint64_t part = r.varint(), parts = r.varint(), first = r.varint(), elements = r.varint();
  if (parts == 0 || parts > kMaxParts || part >= parts) throw DecodeError("part out of range");
  if (elements == 0) throw DecodeError("a part carries at least one element");
  if (elements > kMaxMessageBytes || first > (std::uint64_t{1} << 48)) throw DecodeError("element range out of bounds");
  h.part = static_cast<std::uint32_t>(part);
  h.parts = static_cast<std::uint32_t>(parts);
  h.first_element = first;
  h.elements = static_cast<std::uint32_t>(elements);
  const std::uint8_t c = r.u8();
  const auto codec = codec::codec_from_byte(c);
  if (!codec) throw DecodeError("unknown codec " + std::to_string(c));
  h.codec = *codec;
  const std::uint8_t present = r.u8();
  if (present > 1) throw DecodeError("invalid payload flag");
  d.has_payload = present == 1;
  if (h.part == 0) {
    const std::uint64_t blocks = r.varint();
    if (blocks == 0 || blocks > kMaxParticipants) throw DecodeError("block count out of range");
    h.blocks.resize(blocks);
    for (BlockTag& t : h.blocks) {
      t.weight = r.f64();
      if (!(t.weight >= 0) || !std::isfinite(t.weight)) throw DecodeError("invalid block weight");
      const std::uint64_t tag = r.varint(), groups = tag >> 1;
      if (groups == 0 || groups > kMaxParticipants) throw DecodeError("block participant count out of range");
      t.groups = static_cast<std::uint32_t>(groups);
      t.final = (tag & 1) != 0;
    }
  }
  const std::size_t payload = codec::encoded_size(h.codec, h.elements);
  if (d.has_payload) {
    if (message.virtual_bytes != 0) throw DecodeError("both real and virtual payload");
    d.payload = r.raw(payload);
  } else if (message.virtual_bytes != payload) {
    throw DecodeError("virtual payload of " + std::to_string(message.virtual_bytes) + " bytes, header implies " +
                      std::to_string(payload));
  }
  r.finish();
  return d;
}

}  // namespace swarmlab::core::allreduce
