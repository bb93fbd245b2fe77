#include "core/training/state_messages.h"

#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::core::training {

Message encode_state(const StateMessage& m) {
  Message out;
  out.bytes.reserve(48);  // a header's size; also keeps GCC 12 from a false -Warray-bounds
  Writer w(out.bytes);
  w.u8(static_cast<std::uint8_t>(ServiceId::State));
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.u64(m.request_id);
  if (m.kind == StateKind::Header) {
    w.u64(m.step);
    w.u64(m.lineage);
    w.u64(m.total_bytes);
    w.u32(m.chunks);
  } else if (m.kind == StateKind::UpdatesRequest) {
    w.u64(m.step);
    w.u64(m.lineage);
  } else if (m.kind == StateKind::Chunk) {
    w.u32(m.index);
    w.u32(m.bytes);
    if (m.virtual_payload) out.virtual_bytes = m.bytes;
    else w.raw(m.payload);
  }
  return out;
}

StateMessage decode_state(const Message& message) {
  Reader r(message.bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::State)) throw DecodeError("not a state message");
  StateMessage m;
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 5) throw DecodeError("unknown state message kind");
  m.kind = static_cast<StateKind>(kind);
  m.request_id = r.u64();
  if (m.kind == StateKind::Header) {
    m.step = r.u64();
    m.lineage = r.u64();
    m.total_bytes = r.u64();
    m.chunks = r.u32();
  } else if (m.kind == StateKind::UpdatesRequest) {
    m.step = r.u64();
    m.lineage = r.u64();
  } else if (m.kind == StateKind::Chunk) {
    m.index = r.u32();
    m.bytes = r.u32();
    if (message.virtual_bytes > 0) {
      if (message.virtual_bytes != m.bytes) throw DecodeError("chunk size disagrees with its payload");
      m.virtual_payload = true;
    } else {
      const auto payload = r.raw(m.bytes);
      m.payload.assign(payload.begin(), payload.end());
    }
  }
  r.finish();
  if (m.kind != StateKind::Chunk && message.virtual_bytes != 0) throw DecodeError("unexpected payload");
  return m;
}

}  // namespace swarmlab::core::training
