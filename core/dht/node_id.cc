#include "core/dht/node_id.h"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "core/dht/sha1.h"

namespace swarmlab::core::dht {

namespace {

// Big-endian loads and stores; memcpy plus a byte swap compiles to a load and a bswap.
std::uint64_t load_be64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);  // the supported targets are little-endian (core/wire.cc)
}
std::uint32_t load_be32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
void store_be64(std::uint64_t v, std::uint8_t* p) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
void store_be32(std::uint32_t v, std::uint8_t* p) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}

}  // namespace

NodeId NodeId::from_bytes(std::span<const std::uint8_t, kBytes> bytes) {
  NodeId id;
  id.hi_ = load_be64(bytes.data());
  id.mid_ = load_be64(bytes.data() + 8);
  id.lo_ = load_be32(bytes.data() + 16);
  return id;
}

NodeId NodeId::random(Rng& rng) {
  NodeId id;
  id.hi_ = rng.next_u64();
  id.mid_ = rng.next_u64();
  id.lo_ = static_cast<std::uint32_t>(rng.next_u64() >> 32);
  return id;
}

NodeId NodeId::of_key(std::string_view key) {
  const Sha1Digest d = sha1(key);
  return from_bytes(std::span<const std::uint8_t, kBytes>(d));
}

NodeId NodeId::of_key(std::span<const std::uint8_t> key) {
  const Sha1Digest d = sha1(key);
  return from_bytes(std::span<const std::uint8_t, kBytes>(d));
}

std::array<std::uint8_t, NodeId::kBytes> NodeId::to_bytes() const {
  std::array<std::uint8_t, kBytes> out;
  store_be64(hi_, out.data());
  store_be64(mid_, out.data() + 8);
  store_be32(lo_, out.data() + 16);
  return out;
}

std::string NodeId::hex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : to_bytes()) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

int NodeId::highest_bit() const {
  if (hi_) return 96 + 63 - std::countl_zero(hi_);
  if (mid_) return 32 + 63 - std::countl_zero(mid_);
  if (lo_) return 31 - std::countl_zero(lo_);
  return -1;
}

NodeId random_id_in_bucket(const NodeId& self, int index, Rng& rng) {
  if (index < 0 || index >= NodeId::kBits) throw std::out_of_range("random_id_in_bucket: bad bucket index");
  // distance = 0...0 1 r...r: bit `index` set, higher bits clear, lower bits random.
  auto bytes = NodeId::random(rng).to_bytes();
  for (int i = NodeId::kBits - 1; i >= index; --i) {
    const int byte = (NodeId::kBits - 1 - i) / 8;
    const auto mask = static_cast<std::uint8_t>(1u << (i % 8));
    if (i == index)
      bytes[byte] |= mask;
    else
      bytes[byte] &= static_cast<std::uint8_t>(~mask);
  }
  return self ^ NodeId::from_bytes(std::span<const std::uint8_t, NodeId::kBytes>(bytes));
}

}  // namespace swarmlab::core::dht
