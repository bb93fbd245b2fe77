#pragma once
// Messages of the state download (docs/dedloc.md §1, hivemind's load_state_from_peers): a peer that
// joined or fell behind asks an up-to-date peer for parameters + optimizer state, which streams back
// as a header and then chunks. A peer that holds an older step's state may ask instead for the
// steps taken since (docs/interpretations.md §26): the same header and chunks then carry the
// averaged vectors of those steps, one after another. Layout (core/wire.h, little-endian):
//   Request:        u8 service (State) | u8 kind=1 | u64 request_id
//   Header:         u8 service | u8 kind=2 | u64 request_id | u64 step | u64 lineage |
//                   u64 total_bytes | u32 chunks
//   Chunk:          u8 service | u8 kind=3 | u64 request_id | u32 index | u32 bytes | payload
//   UpdatesRequest: u8 service | u8 kind=4 | u64 request_id | u64 step | u64 lineage (the state held)
//   Refused:        u8 service | u8 kind=5 | u64 request_id (the provider cannot serve that)
// A chunk's payload is its `bytes` of state, either carried (real learners) or charged as the
// message's virtual bytes (sizes-only learners in the simulator), never both.
#include <cstdint>
#include <vector>

#include "core/message.h"

namespace swarmlab::core::training {

enum class StateKind : std::uint8_t { Request = 1, Header = 2, Chunk = 3, UpdatesRequest = 4, Refused = 5 };

struct StateMessage {
  StateKind kind = StateKind::Request;
  std::uint64_t request_id = 0;
  std::uint64_t step = 0;         // Header, UpdatesRequest
  std::uint64_t lineage = 0;      // Header, UpdatesRequest: names the state (core/training/state_lineage.h)
  std::uint64_t total_bytes = 0;  // Header
  std::uint32_t chunks = 0;       // Header
  std::uint32_t index = 0;        // Chunk
  std::uint32_t bytes = 0;        // Chunk: payload size
  bool virtual_payload = false;   // Chunk: the payload is charged, not carried
  std::vector<std::uint8_t> payload;  // Chunk: the carried payload (empty when virtual)
};

Message encode_state(const StateMessage& m);
// Throws core::DecodeError on malformed input (wrong service or kind, truncated, trailing bytes, a
// chunk whose payload disagrees with its size).
StateMessage decode_state(const Message& message);

}  // namespace swarmlab::core::training
