#pragma once
// Kademlia identifiers of 160 or 256 bits (docs/hivemind.md §1, docs/hydra.md §1). Node ids are
// drawn at random; keys are mapped to ids with SHA-1 for 160-bit ids (hivemind: SHA-1 of the
// encoded key) and SHA-256 for 256-bit ids (Hydra). Closeness is the XOR metric: d(a, b) = a ^ b
// read as an unsigned integer.
//
// Every id is held in 256 bits; a 160-bit id has its top 96 bits clear. Both widths therefore
// share the metric, the routing table and the lookups, and a 160-bit id has the same value,
// distances and bucket indices as it would in a 160-bit type. The width is a property of the DHT a
// node runs (DhtConfig::id_bits), which decides how ids are drawn, hashed and put on the wire.
#include <algorithm>
#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/rng.h"

namespace swarmlab::core::dht {

inline constexpr int kKademliaIdBits = 160;
inline constexpr int kHydraIdBits = 256;
inline constexpr bool valid_id_bits(int bits) { return bits == kKademliaIdBits || bits == kHydraIdBits; }

// An id's big-endian bytes at one width: 20 or 32 of them.
struct IdBytes {
  std::array<std::uint8_t, 32> data{};
  std::size_t size = 0;
  // Only on a named object: a view of a temporary would dangle (a range-for over to_bytes().view()).
  std::span<const std::uint8_t> view() const& { return {data.data(), size}; }
  std::span<const std::uint8_t> view() const&& = delete;
  friend bool operator==(const IdBytes& a, const IdBytes& b) {
    return std::equal(a.view().begin(), a.view().end(), b.view().begin(), b.view().end());
  }
};

class NodeId {
 public:
  static constexpr int kMaxBits = kHydraIdBits;

  constexpr NodeId() = default;

  // From 20 or 32 big-endian bytes; throws std::invalid_argument on any other length.
  static NodeId from_bytes(std::span<const std::uint8_t> bytes);
  // Uniform over `bits` bits. Throws std::invalid_argument unless valid_id_bits(bits).
  static NodeId random(Rng& rng, int bits = kKademliaIdBits);
  // SHA-1 of the key's bytes at 160 bits, SHA-256 at 256.
  static NodeId of_key(std::string_view key, int bits = kKademliaIdBits);
  static NodeId of_key(std::span<const std::uint8_t> key, int bits = kKademliaIdBits);

  // Throws std::invalid_argument unless the id fits in `bits` (and bits is a valid width).
  IdBytes to_bytes(int bits = kKademliaIdBits) const;
  std::string hex(int bits = kKademliaIdBits) const;
  // No bit at or above `bits` is set.
  bool fits(int bits) const { return highest_bit() < bits; }

  // Bit `i` (0 = least significant, 255 = most significant).
  bool bit(int i) const { return (w_[3 - i / 64] >> (i % 64)) & 1u; }

  friend NodeId operator^(const NodeId& a, const NodeId& b) {
    NodeId r;
    for (int i = 0; i < 4; ++i) r.w_[i] = a.w_[i] ^ b.w_[i];
    return r;
  }
  // Numeric order (words compare most significant first), so comparing two XOR distances compares
  // closeness. Lookups spend much of their time here, hence machine words compared by hand (the
  // defaulted operators go through memcmp).
  friend std::strong_ordering operator<=>(const NodeId& a, const NodeId& b) {
    for (int i = 0; i < 4; ++i)
      if (a.w_[i] != b.w_[i]) return a.w_[i] <=> b.w_[i];
    return std::strong_ordering::equal;
  }
  friend bool operator==(const NodeId& a, const NodeId& b) {
    return ((a.w_[0] ^ b.w_[0]) | (a.w_[1] ^ b.w_[1]) | (a.w_[2] ^ b.w_[2]) | (a.w_[3] ^ b.w_[3])) == 0;
  }

  bool is_zero() const { return (w_[0] | w_[1] | w_[2] | w_[3]) == 0; }
  // Index of the most significant set bit, or -1 for zero.
  int highest_bit() const;

 private:
  std::array<std::uint64_t, 4> w_{};  // w_[0] holds bits 255..192, w_[3] bits 63..0
};

// The k-bucket that `other` falls into as seen from `self`: the index of the highest bit in which
// they differ (0..bits-1), or -1 when they are equal.
inline int bucket_index(const NodeId& self, const NodeId& other) { return (self ^ other).highest_bit(); }

// True when `a` is strictly closer to `target` than `b`.
inline bool closer(const NodeId& target, const NodeId& a, const NodeId& b) { return (a ^ target) < (b ^ target); }

// A random id of width `bits` that falls into bucket `index` as seen from `self` (used to refresh
// a bucket). Throws std::out_of_range unless 0 <= index < bits.
NodeId random_id_in_bucket(const NodeId& self, int index, Rng& rng, int bits = kKademliaIdBits);

}  // namespace swarmlab::core::dht
