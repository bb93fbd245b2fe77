#pragma once
// One peer's training progress as it publishes it in the DHT (docs/dedloc.md §5): under the key
// "{run}_progress", subkey = the peer's identity, this record as the value.
//
// Value encoding (core/wire.h), version 2:
//   u8 version (2), varint peer, varint step, u64 lineage, varint samples, f64 samples_per_s,
//   f64 time, u8 client_mode (0/1)
// decode_progress() accepts exactly this: negative or non-finite rates and times, booleans other
// than 0/1, truncation and trailing bytes throw DecodeError.
#include <cstdint>
#include <span>
#include <vector>

#include "core/env.h"

namespace swarmlab::core::progress {

struct PeerProgress {
  PeerId peer = 0;
  std::uint64_t step = 0;       // optimizer steps this peer has taken (hivemind: its epoch)
  std::uint64_t samples = 0;    // samples accumulated towards the next step, as of `time`
  double samples_per_s = 0;     // this peer's recent training throughput
  Seconds time = 0;             // when `samples` was true (the reporter's clock)
  bool client_mode = false;     // client-mode peers do not define the global step
  std::uint64_t lineage = 0;    // names the state it holds at `step` (core/training/state_lineage.h)
  friend bool operator==(const PeerProgress&, const PeerProgress&) = default;
};

std::vector<std::uint8_t> encode_progress(const PeerProgress& p);
PeerProgress decode_progress(std::span<const std::uint8_t> bytes);

// The DHT subkey naming `peer`: its id as 4 little-endian bytes.
std::vector<std::uint8_t> peer_subkey(PeerId peer);

}  // namespace swarmlab::core::progress
