#include "core/relay/relay_frame.h"

#include <limits>
#include <string>

namespace swarmlab::core::relay {

std::vector<std::uint8_t> encode_frame(FrameKind kind, PeerId peer, std::span<const std::uint8_t> payload) {
  std::vector<std::uint8_t> out;
  out.reserve(2 + 5 + payload.size());
  Writer w(out);
  w.u8(kRelayTag);
  w.u8(static_cast<std::uint8_t>(kind));
  w.varint(peer);
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

RelayFrame decode_frame(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  if (r.u8() != kRelayTag) throw DecodeError("relay frame: wrong tag");
  RelayFrame f;
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 3) throw DecodeError("relay frame: unknown kind " + std::to_string(kind));
  f.kind = static_cast<FrameKind>(kind);
  const std::uint64_t peer = r.varint();
  if (peer > std::numeric_limits<PeerId>::max()) throw DecodeError("relay frame: peer id above 32 bits");
  f.peer = static_cast<PeerId>(peer);
  f.payload = r.raw(r.remaining());
  if (f.kind == FrameKind::Unreachable && !f.payload.empty()) throw DecodeError("relay frame: Unreachable carries no message");
  return f;
}

}  // namespace swarmlab::core::relay
