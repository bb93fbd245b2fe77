#pragma once
// SHA-256 (FIPS 180-4, sections 5.3.3 and 6.2), used to map a dataset's title to the key of its
// tracker group (docs/hydra.md §2: the tracker is the peer closest to SHA-256 of the title).
// Written from the standard, in the same shape as sha1.h.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace swarmlab::core::dht {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Incremental hashing: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  void update(std::span<const std::uint8_t> data);
  void update(std::string_view data);
  // Pads, finishes and returns the digest; the object must not be updated afterwards.
  Sha256Digest digest();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> h_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Sha256Digest sha256(std::span<const std::uint8_t> data);
Sha256Digest sha256(std::string_view data);

}  // namespace swarmlab::core::dht
