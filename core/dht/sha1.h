#pragma once
// SHA-1 (FIPS 180-4, section 6.1), used only to map DHT keys to 160-bit ids as hivemind does. Not
// for security: SHA-1 collisions are practical, and nothing here relies on collision resistance.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace swarmlab::core::dht {

using Sha1Digest = std::array<std::uint8_t, 20>;

// Incremental hashing: update() any number of times, then digest() once.
class Sha1 {
 public:
  Sha1();
  void update(std::span<const std::uint8_t> data);
  void update(std::string_view data);
  // Pads, finishes and returns the digest; the object must not be updated afterwards.
  Sha1Digest digest();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 5> h_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Sha1Digest sha1(std::span<const std::uint8_t> data);
Sha1Digest sha1(std::string_view data);

}  // namespace swarmlab::core::dht
