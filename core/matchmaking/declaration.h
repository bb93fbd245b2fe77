#pragma once
// What a peer looking for a group writes under its group key in the DHT: subkey = its peer id
// (4 bytes, little-endian), value = its declared expiration and whether it is still looking.
//
// Value encoding (core/wire.h): u8 version (1), f64 expiration, u8 looking (0/1).
//
// A peer stops being a candidate (it joined a group as a follower, or its group began) by storing
// looking = 0 with an expiration just after the one it declared: the DHT keeps the later
// expiration, so the withdrawal replaces the declaration everywhere it lands (as hivemind does).
#include <cstdint>
#include <span>
#include <vector>

#include "core/env.h"

namespace swarmlab::core::matchmaking {

struct Declaration {
  Seconds expiration = 0;
  bool looking = true;
  friend bool operator==(const Declaration&, const Declaration&) = default;
};

std::vector<std::uint8_t> encode_declaration(const Declaration& d);
// Throws DecodeError on anything else (non-finite expiration, bad flag, wrong length).
Declaration decode_declaration(std::span<const std::uint8_t> bytes);

std::vector<std::uint8_t> peer_subkey(PeerId peer);
// Throws DecodeError unless `subkey` is 4 bytes.
PeerId decode_peer_subkey(std::span<const std::uint8_t> subkey);

}  // namespace swarmlab::core::matchmaking
