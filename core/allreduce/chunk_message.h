#pragma once
// The data messages of the replicated all-reduce (docs/hydra.md §5, core/allreduce/README.md).
// Control (which steps a replica group has done) goes through the group's Raft log; these carry
// the data. Layout (core/wire.h):
//
//   u8 service (AllReduce) | u8 kind | varint round | varint step | varint from_group | body
//
//   Part   varint part | varint parts | varint first_element | varint elements | u8 codec |
//          u8 payload_present | [part 0 only: varint blocks, blocks × (f64 weight,
//          varint 2·groups + final)] | payload
//   Pull   (no body)
//   Busy   (no body)
//
// A Part is one piece of the chunk that participant `from_group` sends at `step`: its elements
// are partial averages, and part 0 also carries, per block of the chunk, the weight behind its
// partial average, how many participants it includes (a block is averaged in full when that is
// every participant of the round: peers need not know each other's weights), and whether it is the
// block's final average, as its reducer finished it, rather than a partial one. A
// group's leader sends its chunk to the partner group's leader and forwards the parts it receives
// to its own followers (the same message). Pull asks the partner group for its chunk of `step`
// again: a new leader sends it after an election, and it tells the partner who leads now. A leader
// waiting on its partner also pulls now and then, as a keepalive; a partner that has not reached
// the step yet, or whose chunk is already on its way to the puller, answers Busy: it is alive, so
// a group held up by a lost group further up is not taken for lost itself.
// In the simulator the payload may be virtual (header only, the encoded size charged).
#include <cstdint>
#include <span>
#include <vector>

#include "core/codec/codec.h"
#include "core/message.h"

namespace swarmlab::core::allreduce {

enum class ChunkKind : std::uint8_t { Part = 1, Pull = 2, Busy = 3 };

// What a receiver accepts.
inline constexpr std::uint64_t kMaxParticipants = 4096;
inline constexpr std::uint64_t kMaxSteps = 64;
inline constexpr std::uint64_t kMaxParts = 1u << 24;

// What part 0 of a chunk says of each of its blocks.
struct BlockTag {
  double weight = 0;         // behind the block's partial average
  std::uint32_t groups = 1;  // participants that average includes
  bool final = false;        // it is the average the block's reducer finished
  friend bool operator==(const BlockTag&, const BlockTag&) = default;
};

struct ChunkHeader {
  ChunkKind kind = ChunkKind::Part;
  std::uint64_t round_id = 0;
  std::uint32_t step = 0;
  std::uint32_t from_group = 0;
  // Part only.
  std::uint32_t part = 0;
  std::uint32_t parts = 1;
  std::uint64_t first_element = 0;  // offset in the whole vector
  std::uint32_t elements = 0;
  codec::Codec codec = codec::Codec::Fp32;
  std::vector<BlockTag> blocks;  // part 0 only: one per block of the chunk
};

struct DecodedChunk {
  ChunkHeader header;
  bool has_payload = false;
  std::span<const std::uint8_t> payload;  // views the message's bytes
};

// `values` empty: virtual payload (sizes only). Otherwise values.size() == header.elements.
Message encode_chunk(const ChunkHeader& header, std::span<const float> values);

// Throws core::DecodeError on anything but a well-formed message within the limits above.
DecodedChunk decode_chunk(const Message& message);

}  // namespace swarmlab::core::allreduce
