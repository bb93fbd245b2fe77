#pragma once
// The first frame on every live connection. The connecting peer sends Hello (who it is, whom it
// expects, which run); the accepting peer checks it and answers Ack, or closes the connection.
// Layout (core/wire.h): u32 magic "SWLM" | u16 version (2) | u8 kind | u64 network | u32 from |
// u32 to | u8 has_listen (0/1) [| u32 ip | u16 port]: a Hello says where its sender listens (none
// for a client-mode peer), so that the acceptor learns its address (exec/address_directory.h).
// `network` identifies the run (scenario and launch), so a stray connection from another run or an
// old process on a reused port is refused instead of being mistaken for a peer.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/env.h"
#include "exec/socket_address.h"

namespace swarmlab::exec {

inline constexpr std::uint32_t kHandshakeMagic = 0x4D4C5753;  // "SWLM" little-endian
inline constexpr std::uint16_t kHandshakeVersion = 2;
// Handshake frames are tiny; a longer frame before the handshake is garbage.
inline constexpr std::uint64_t kMaxHandshakeBytes = 64;

enum class HandshakeKind : std::uint8_t { Hello = 1, Ack = 2 };

struct Handshake {
  HandshakeKind kind = HandshakeKind::Hello;
  std::uint64_t network = 0;
  core::PeerId from = 0;
  core::PeerId to = 0;
  std::optional<SocketAddress> listen;  // Hello: where the sender accepts connections
};

std::vector<std::uint8_t> encode_handshake(const Handshake& h);
// Throws core::DecodeError on anything but a well-formed handshake of this version.
Handshake decode_handshake(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::exec
