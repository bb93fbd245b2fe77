#pragma once
// A message as it crosses the environment seam: real encoded bytes plus an optional virtual
// payload whose bytes the simulator charges but does not carry (see env.h).
#include <cstdint>
#include <vector>

namespace swarmlab::core {

// Bytes of framing each message costs on the wire: the 4-byte length prefix.
inline constexpr std::uint64_t kFrameHeaderBytes = 4;

// The largest message any binding accepts; larger frames are rejected as malformed.
inline constexpr std::uint64_t kMaxMessageBytes = 64ull << 20;

struct Message {
  std::vector<std::uint8_t> bytes;   // encoded header and content (core/wire.h)
  std::uint64_t virtual_bytes = 0;   // payload simulated by size only; always 0 in live mode

  // What this message costs on the wire, framing included.
  std::uint64_t wire_size() const { return kFrameHeaderBytes + bytes.size() + virtual_bytes; }
};

}  // namespace swarmlab::core
