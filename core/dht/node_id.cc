#include "core/dht/node_id.h"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "core/dht/sha1.h"
#include "core/dht/sha256.h"

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

void check_bits(int bits) {
  if (!valid_id_bits(bits)) throw std::invalid_argument("NodeId: width must be 160 or 256 bits");
}

}  // namespace

NodeId NodeId::from_bytes(std::span<const std::uint8_t> bytes) {
  NodeId id;
  const std::uint8_t* p = bytes.data();
  if (bytes.size() == 32) {
    for (int i = 0; i < 4; ++i) id.w_[i] = load_be64(p + 8 * i);
  } else if (bytes.size() == 20) {
    // 160 bits: 32 in w_[1], then two full words.
    id.w_[1] = load_be32(p);
    id.w_[2] = load_be64(p + 4);
    id.w_[3] = load_be64(p + 12);
  } else {
    throw std::invalid_argument("NodeId::from_bytes: expected 20 or 32 bytes");
  }
  return id;
}

NodeId NodeId::random(Rng& rng, int bits) {
  check_bits(bits);
  NodeId id;
  if (bits == kHydraIdBits) {
    for (auto& w : id.w_) w = rng.next_u64();
    return id;
  }
  // The 160-bit draw: bits 159..96, 95..32, then the top 32 bits of a third word as bits 31..0.
  const std::uint64_t hi = rng.next_u64(), mid = rng.next_u64();
  const std::uint64_t lo = rng.next_u64() >> 32;
  id.w_[1] = hi >> 32;
  id.w_[2] = (hi << 32) | (mid >> 32);
  id.w_[3] = (mid << 32) | lo;
  return id;
}

NodeId NodeId::of_key(std::string_view key, int bits) {
  return of_key(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(key.data()), key.size()), bits);
}

NodeId NodeId::of_key(std::span<const std::uint8_t> key, int bits) {
  check_bits(bits);
  if (bits == kHydraIdBits) {
    const Sha256Digest d = sha256(key);
    return from_bytes(d);
  }
  const Sha1Digest d = sha1(key);
  return from_bytes(d);
}

IdBytes NodeId::to_bytes(int bits) const {
  check_bits(bits);
  if (!fits(bits)) throw std::invalid_argument("NodeId::to_bytes: the id does not fit the width");
  IdBytes out;
  if (bits == kHydraIdBits) {
    for (int i = 0; i < 4; ++i) store_be64(w_[i], out.data.data() + 8 * i);
    out.size = 32;
  } else {
    store_be32(static_cast<std::uint32_t>(w_[1]), out.data.data());
    store_be64(w_[2], out.data.data() + 4);
    store_be64(w_[3], out.data.data() + 12);
    out.size = 20;
  }
  return out;
}

std::string NodeId::hex(int bits) const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  const IdBytes bytes = to_bytes(bits);
  for (std::uint8_t b : bytes.view()) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

int NodeId::highest_bit() const {
  for (int i = 0; i < 4; ++i)
    if (w_[i]) return 64 * (3 - i) + 63 - std::countl_zero(w_[i]);
  return -1;
}

NodeId random_id_in_bucket(const NodeId& self, int index, Rng& rng, int bits) {
  check_bits(bits);
  if (index < 0 || index >= bits) throw std::out_of_range("random_id_in_bucket: bad bucket index");
  // distance = 0...0 1 r...r: bit `index` set, higher bits clear, lower bits random.
  IdBytes b = NodeId::random(rng, bits).to_bytes(bits);
  for (int i = bits - 1; i >= index; --i) {
    const auto byte = static_cast<std::size_t>((bits - 1 - i) / 8);
    const auto mask = static_cast<std::uint8_t>(1u << (i % 8));
    if (i == index)
      b.data[byte] |= mask;
    else
      b.data[byte] &= static_cast<std::uint8_t>(~mask);
  }
  return self ^ NodeId::from_bytes(b.view());
}

}  // namespace swarmlab::core::dht
