#pragma once
// 160-bit Kademlia identifiers. Node ids are drawn at random; keys are mapped to ids with SHA-1
// (hivemind: SHA-1 of the encoded key). Closeness is the XOR metric: d(a, b) = a ^ b read as an
// unsigned 160-bit integer.
#include <array>
#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/rng.h"

namespace swarmlab::core::dht {

class NodeId {
 public:
  static constexpr int kBits = 160;
  static constexpr std::size_t kBytes = 20;

  constexpr NodeId() = default;

  // From 20 big-endian bytes.
  static NodeId from_bytes(std::span<const std::uint8_t, kBytes> bytes);
  static NodeId random(Rng& rng);
  // SHA-1 of the key's bytes.
  static NodeId of_key(std::string_view key);
  static NodeId of_key(std::span<const std::uint8_t> key);

  std::array<std::uint8_t, kBytes> to_bytes() const;
  std::string hex() const;

  // Bit `i` (0 = least significant, 159 = most significant).
  bool bit(int i) const {
    if (i >= 96) return (hi_ >> (i - 96)) & 1u;
    if (i >= 32) return (mid_ >> (i - 32)) & 1u;
    return (lo_ >> i) & 1u;
  }

  friend NodeId operator^(const NodeId& a, const NodeId& b) {
    NodeId r;
    r.hi_ = a.hi_ ^ b.hi_;
    r.mid_ = a.mid_ ^ b.mid_;
    r.lo_ = a.lo_ ^ b.lo_;
    return r;
  }
  // Numeric order (members compare most significant first), so comparing two XOR distances
  // compares closeness. Lookups spend much of their time here, hence three machine words.
  friend auto operator<=>(const NodeId&, const NodeId&) = default;
  friend bool operator==(const NodeId&, const NodeId&) = default;

  bool is_zero() const { return (hi_ | mid_ | lo_) == 0; }
  // Index of the most significant set bit, or -1 for zero.
  int highest_bit() const;

 private:
  std::uint64_t hi_ = 0;   // bits 159..96
  std::uint64_t mid_ = 0;  // bits 95..32
  std::uint32_t lo_ = 0;   // bits 31..0
};

// The k-bucket that `other` falls into as seen from `self`: the index of the highest bit in which
// they differ (0..159), or -1 when they are equal.
inline int bucket_index(const NodeId& self, const NodeId& other) { return (self ^ other).highest_bit(); }

// True when `a` is strictly closer to `target` than `b`.
inline bool closer(const NodeId& target, const NodeId& a, const NodeId& b) { return (a ^ target) < (b ^ target); }

// A random id that falls into bucket `index` as seen from `self` (used to refresh a bucket).
NodeId random_id_in_bucket(const NodeId& self, int index, Rng& rng);

}  // namespace swarmlab::core::dht
