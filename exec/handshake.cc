#include "exec/handshake.h"

#include "core/wire.h"

namespace swarmlab::exec {

std::vector<std::uint8_t> encode_handshake(const Handshake& h) {
  std::vector<std::uint8_t> out;
  core::Writer w(out);
  w.u32(kHandshakeMagic);
  w.u16(kHandshakeVersion);
  w.u8(static_cast<std::uint8_t>(h.kind));
  w.u64(h.network);
  w.u32(h.from);
  w.u32(h.to);
  return out;
}

Handshake decode_handshake(std::span<const std::uint8_t> bytes) {
  core::Reader r(bytes);
  if (r.u32() != kHandshakeMagic) throw core::DecodeError("not a swarmlab handshake");
  if (r.u16() != kHandshakeVersion) throw core::DecodeError("unsupported handshake version");
  Handshake h;
  const std::uint8_t kind = r.u8();
  if (kind != 1 && kind != 2) throw core::DecodeError("unknown handshake kind");
  h.kind = static_cast<HandshakeKind>(kind);
  h.network = r.u64();
  h.from = r.u32();
  h.to = r.u32();
  r.finish();
  return h;
}

}  // namespace swarmlab::exec
