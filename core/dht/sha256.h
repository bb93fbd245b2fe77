#pragma once
// SHA-256 (FIPS 180-4, sections 5.3.3 and 6.2), used to map a dataset's title to the key of its
// tracker group (docs/hydra.md §2: the tracker is the peer closest to SHA-256 of the title).
// Written from the standard, in the same shape as sha1.h.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "core/dht/block_hash.h"

namespace swarmlab::core::dht {

// Initial hash value H(0) (section 5.3.3: the first 32 bits of the fractional parts of the square
// roots of the first 8 primes) and one block's compression (section 6.2.2).
struct Sha256Traits {
  static constexpr std::array<std::uint32_t, 8> kInitial = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                                            0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};
  static void compress(std::array<std::uint32_t, 8>& h, const std::uint8_t* block);
};

using Sha256 = BlockHash<Sha256Traits>;
using Sha256Digest = Sha256::Digest;

Sha256Digest sha256(std::span<const std::uint8_t> data);
Sha256Digest sha256(std::string_view data);

}  // namespace swarmlab::core::dht
