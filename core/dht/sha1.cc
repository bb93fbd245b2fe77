#include "core/dht/sha1.h"

#include <bit>

namespace swarmlab::core::dht {

// One 512-bit block (section 6.1.2): expand the message schedule W, run 80 rounds, add.
void Sha1Traits::compress(std::array<std::uint32_t, 5>& state, const std::uint8_t* block) {
  std::uint32_t w[80];
  for (int t = 0; t < 16; ++t) w[t] = block_word(block + 4 * t);
  for (int t = 16; t < 80; ++t) w[t] = std::rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);

  std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
  for (int t = 0; t < 80; ++t) {
    std::uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);  // Ch
      k = 0x5A827999u;
    } else if (t < 40) {
      f = b ^ c ^ d;  // Parity
      k = 0x6ED9EBA1u;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);  // Maj
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;  // Parity
      k = 0xCA62C1D6u;
    }
    const std::uint32_t temp = std::rotl(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = std::rotl(b, 30);
    b = a;
    a = temp;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
}

Sha1Digest sha1(std::span<const std::uint8_t> data) { return digest_of<Sha1>(data); }

Sha1Digest sha1(std::string_view data) { return digest_of<Sha1>(data); }

}  // namespace swarmlab::core::dht
