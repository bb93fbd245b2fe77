#pragma once
// A core::Message from fuzz input, for decoders that take one (its bytes, and the simulator's
// virtual payload size): the first byte says whether the message claims a virtual payload, whose
// size is then in the next 4 bytes (little-endian); the rest are its bytes. nullopt: too short.
#include <cstdint>
#include <optional>
#include <span>

#include "core/message.h"

namespace swarmlab::fuzz {

inline std::optional<core::Message> message_from_fuzz(std::span<const std::uint8_t> bytes) {
  if (bytes.empty()) return std::nullopt;
  core::Message m;
  std::span<const std::uint8_t> rest = bytes.subspan(1);
  if (bytes[0] & 1) {
    if (rest.size() < 4) return std::nullopt;
    m.virtual_bytes = rest[0] | (rest[1] << 8) | (rest[2] << 16) | (std::uint64_t{rest[3]} << 24);
    rest = rest.subspan(4);
  }
  m.bytes.assign(rest.begin(), rest.end());
  return m;
}

}  // namespace swarmlab::fuzz
