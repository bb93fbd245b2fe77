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
  w.u8(h.listen ? 1 : 0);
  if (h.listen) {
    w.u32(h.listen->ip);
    w.u16(h.listen->port);
  }
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
  const std::uint8_t has_listen = r.u8();
  if (has_listen > 1) throw core::DecodeError("bad handshake listen flag");
  if (has_listen) {
    SocketAddress a;
    a.ip = r.u32();
    a.port = r.u16();
    h.listen = a;
  }
  r.finish();
  return h;
}

}  // namespace swarmlab::exec
