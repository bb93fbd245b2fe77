#pragma once
// SHA-1 (FIPS 180-4, section 6.1), used only to map DHT keys to 160-bit ids as hivemind does. Not
// for security: SHA-1 collisions are practical, and nothing here relies on collision resistance.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/dht/block_hash.h"

namespace swarmlab::core::dht {

// Initial hash value H(0) (section 5.3.1) and one block's compression (section 6.1.2).
struct Sha1Traits {
  static constexpr std::array<std::uint32_t, 5> kInitial = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u,
                                                            0xC3D2E1F0u};
  static void compress(std::array<std::uint32_t, 5>& h, const std::uint8_t* block);
};

using Sha1 = BlockHash<Sha1Traits>;
using Sha1Digest = Sha1::Digest;

Sha1Digest sha1(std::span<const std::uint8_t> data);
Sha1Digest sha1(std::string_view data);

}  // namespace swarmlab::core::dht
