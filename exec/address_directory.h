#pragma once
// Address discovery for live peers that start from a few addresses only (the bootstrap peers, in
// practice the backbones): the transport learns a dialer's address from its Hello
// (exec/handshake.h) and passes what it knows along in directory frames, so that every peer
// learns where every other reachable peer listens without a static list of all of them. The DHT
// (core/dht) then finds peers by id as it always does; only this binding needs the addresses.
//
// A directory frame travels on the same connections as protocol messages; its first byte,
// kDirectoryFrame, is one no core service uses (core/service_ids.h). Layout (core/wire.h):
//   u8 0xFF | varint count | count x (u32 peer | u32 ip | u16 port)
// Sent in full to each peer when a connection to it opens, then one entry at a time to every open
// connection when a new address is learned (flooding stops at peers that knew it already).
#include <cstdint>
#include <span>
#include <vector>

#include "core/env.h"
#include "exec/socket_address.h"

namespace swarmlab::exec {

inline constexpr std::uint8_t kDirectoryFrame = 0xFF;
inline constexpr std::size_t kMaxDirectoryEntries = 1 << 16;

struct DirectoryEntry {
  core::PeerId peer = 0;
  SocketAddress address;
  bool operator==(const DirectoryEntry&) const = default;
};

std::vector<std::uint8_t> encode_directory(std::span<const DirectoryEntry> entries);
// Throws core::DecodeError on anything but a well-formed directory frame (more than
// kMaxDirectoryEntries entries, port 0, truncation, trailing bytes).
std::vector<DirectoryEntry> decode_directory(std::span<const std::uint8_t> frame);

}  // namespace swarmlab::exec
