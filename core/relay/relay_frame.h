#pragma once
// The frames of the circuit relay (docs/trust.md §4). A peer that cannot reach another directly
// hands its message to their relay in a Forward frame; the relay passes it on in a Deliver frame
// that names the original sender; when the relay cannot reach the target it answers Unreachable.
//
//   u8 tag (kRelayTag), u8 kind, varint peer, then for Forward and Deliver the message's bytes
//
// `peer` is the target (Forward, Unreachable) or the original sender (Deliver). The message's
// virtual payload (core/message.h) rides along unchanged, so both hops are charged for it.
#include <cstdint>
#include <span>
#include <vector>

#include "core/types.h"
#include "core/wire.h"

namespace swarmlab::core::relay {

inline constexpr std::uint8_t kRelayTag = 0xA2;  // first byte of every relay frame (not a ServiceId)

enum class FrameKind : std::uint8_t { Forward = 1, Deliver = 2, Unreachable = 3 };

struct RelayFrame {
  FrameKind kind = FrameKind::Forward;
  PeerId peer = 0;
  std::span<const std::uint8_t> payload;  // into the decoded bytes; empty for Unreachable
};

inline bool is_relay_frame(std::span<const std::uint8_t> bytes) { return !bytes.empty() && bytes[0] == kRelayTag; }

std::vector<std::uint8_t> encode_frame(FrameKind kind, PeerId peer, std::span<const std::uint8_t> payload = {});
// Throws DecodeError: wrong tag, unknown kind, a peer id above 32 bits, a payload on Unreachable.
RelayFrame decode_frame(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::relay
