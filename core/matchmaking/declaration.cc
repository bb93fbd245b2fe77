#include "core/matchmaking/declaration.h"

#include <cmath>

#include "core/wire.h"

namespace swarmlab::core::matchmaking {

namespace {
constexpr std::uint8_t kDeclarationVersion = 1;
}

std::vector<std::uint8_t> encode_declaration(const Declaration& d) {
  std::vector<std::uint8_t> out;
  out.reserve(64);  // also keeps GCC 12 from a false -Warray-bounds on the first insert
  Writer w(out);
  w.u8(kDeclarationVersion);
  w.f64(d.expiration);
  w.u8(d.looking ? 1 : 0);
  return out;
}

Declaration decode_declaration(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  if (r.u8() != kDeclarationVersion) throw DecodeError("declaration: unknown version");
  Declaration d;
  d.expiration = r.f64();
  if (!std::isfinite(d.expiration)) throw DecodeError("declaration: non-finite expiration");
  const std::uint8_t looking = r.u8();
  if (looking > 1) throw DecodeError("declaration: bad looking flag");
  d.looking = looking == 1;
  r.finish();
  return d;
}

std::vector<std::uint8_t> peer_subkey(PeerId peer) {
  return {static_cast<std::uint8_t>(peer), static_cast<std::uint8_t>(peer >> 8), static_cast<std::uint8_t>(peer >> 16),
          static_cast<std::uint8_t>(peer >> 24)};  // little-endian, as Writer::u32
}

PeerId decode_peer_subkey(std::span<const std::uint8_t> subkey) {
  Reader r(subkey);
  const PeerId peer = r.u32();
  r.finish();
  return peer;
}

}  // namespace swarmlab::core::matchmaking
