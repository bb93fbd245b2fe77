#include "core/dht/sha1.h"

#include <bit>

namespace swarmlab::core::dht {
namespace {

std::uint32_t load_be32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) << 24 | static_cast<std::uint32_t>(p[1]) << 16 |
         static_cast<std::uint32_t>(p[2]) << 8 | static_cast<std::uint32_t>(p[3]);
}

}  // namespace

// Initial hash value H(0), FIPS 180-4 section 5.3.1.
Sha1::Sha1() : h_{0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u} {}

void Sha1::update(std::string_view data) {
  update(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}

void Sha1::update(std::span<const std::uint8_t> data) {
  total_bytes_ += data.size();
  std::size_t i = 0;
  if (buffered_ > 0) {
    while (buffered_ < 64 && i < data.size()) buffer_[buffered_++] = data[i++];
    if (buffered_ < 64) return;
    compress(buffer_.data());
    buffered_ = 0;
  }
  for (; i + 64 <= data.size(); i += 64) compress(data.data() + i);
  while (i < data.size()) buffer_[buffered_++] = data[i++];
}

Sha1Digest Sha1::digest() {
  // Padding (section 5.1.1): a 1 bit, zeros up to 56 mod 64 bytes, then the bit length (64-bit BE).
  const std::uint64_t bit_length = total_bytes_ * 8;
  buffer_[buffered_++] = 0x80;
  if (buffered_ > 56) {
    while (buffered_ < 64) buffer_[buffered_++] = 0;
    compress(buffer_.data());
    buffered_ = 0;
  }
  while (buffered_ < 56) buffer_[buffered_++] = 0;
  for (int i = 7; i >= 0; --i) buffer_[buffered_++] = static_cast<std::uint8_t>(bit_length >> (8 * i));
  compress(buffer_.data());
  buffered_ = 0;

  Sha1Digest out;
  for (int i = 0; i < 5; ++i)
    for (int b = 0; b < 4; ++b) out[4 * i + b] = static_cast<std::uint8_t>(h_[i] >> (24 - 8 * b));
  return out;
}

// One 512-bit block (section 6.1.2): expand the message schedule W, run 80 rounds, add.
void Sha1::compress(const std::uint8_t* block) {
  std::uint32_t w[80];
  for (int t = 0; t < 16; ++t) w[t] = load_be32(block + 4 * t);
  for (int t = 16; t < 80; ++t) w[t] = std::rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);

  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4];
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
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
}

Sha1Digest sha1(std::span<const std::uint8_t> data) {
  Sha1 s;
  s.update(data);
  return s.digest();
}

Sha1Digest sha1(std::string_view data) {
  Sha1 s;
  s.update(data);
  return s.digest();
}

}  // namespace swarmlab::core::dht
