#include "core/dht/node_id.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "core/dht/sha1.h"
#include "core/dht/sha256.h"

namespace swarmlab::core::dht {
namespace {

NodeId id_from_low(std::uint64_t low) {
  std::array<std::uint8_t, 20> b{};
  for (int i = 0; i < 8; ++i) b[19 - i] = static_cast<std::uint8_t>(low >> (8 * i));
  return NodeId::from_bytes(b);
}

std::vector<std::uint8_t> bytes_of(const NodeId& id, int bits) {
  const IdBytes b = id.to_bytes(bits);
  return {b.view().begin(), b.view().end()};
}

TEST(NodeId, BytesRoundTripAndHex) {
  Rng rng(3);
  for (int bits : {kKademliaIdBits, kHydraIdBits})
    for (int i = 0; i < 100; ++i) {
      const NodeId id = NodeId::random(rng, bits);
      EXPECT_EQ(id.to_bytes(bits).size, static_cast<std::size_t>(bits / 8));
      const IdBytes bytes = id.to_bytes(bits);
      EXPECT_EQ(NodeId::from_bytes(bytes.view()), id);
    }
  std::array<std::uint8_t, 20> b{};
  b[0] = 0xAB;
  b[19] = 0x01;
  EXPECT_EQ(NodeId::from_bytes(b).hex(), "ab00000000000000000000000000000000000001");
  // The same value at 256 bits: 12 more leading zero bytes.
  EXPECT_EQ(NodeId::from_bytes(b).hex(kHydraIdBits), "000000000000000000000000ab00000000000000000000000000000000000001");
}

TEST(NodeId, OnlyTheTwoWidthsAndIdsThatFitThem) {
  Rng rng(4);
  const std::array<std::uint8_t, 19> short_bytes{};
  EXPECT_THROW(NodeId::from_bytes(short_bytes), std::invalid_argument);
  EXPECT_THROW(NodeId::random(rng, 128), std::invalid_argument);
  EXPECT_THROW(NodeId::of_key("abc", 512), std::invalid_argument);
  // A 256-bit id almost never fits 160 bits; a 160-bit id always fits 256.
  const NodeId wide = NodeId::random(rng, kHydraIdBits);
  ASSERT_GT(wide.highest_bit(), 159);
  EXPECT_FALSE(wide.fits(kKademliaIdBits));
  EXPECT_THROW(wide.to_bytes(kKademliaIdBits), std::invalid_argument);
  const NodeId narrow = NodeId::random(rng, kKademliaIdBits);
  EXPECT_TRUE(narrow.fits(kKademliaIdBits));
  EXPECT_EQ(bytes_of(narrow, kHydraIdBits).size(), 32u);
}

TEST(NodeId, KeyIdIsSha1OfTheKeyAt160BitsAndSha256At256) {
  const Sha1Digest d = sha1("abc");
  EXPECT_EQ(bytes_of(NodeId::of_key("abc"), kKademliaIdBits), std::vector<std::uint8_t>(d.begin(), d.end()));
  EXPECT_EQ(NodeId::of_key("abc").hex(), "a9993e364706816aba3e25717850c26c9cd0d89d");
  const Sha256Digest d256 = sha256("abc");
  EXPECT_EQ(bytes_of(NodeId::of_key("abc", kHydraIdBits), kHydraIdBits), std::vector<std::uint8_t>(d256.begin(), d256.end()));
  EXPECT_EQ(NodeId::of_key("abc", kHydraIdBits).hex(kHydraIdBits),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(NodeId, XorDistanceIsAMetric) {
  Rng rng(5);
  for (int bits : {kKademliaIdBits, kHydraIdBits})
    for (int i = 0; i < 200; ++i) {
      const NodeId a = NodeId::random(rng, bits), b = NodeId::random(rng, bits), c = NodeId::random(rng, bits);
      EXPECT_TRUE((a ^ a).is_zero());
      EXPECT_EQ(a ^ b, b ^ a);
      EXPECT_EQ((a ^ b) ^ (b ^ c), a ^ c);  // XOR "triangle equality"
    }
}

TEST(NodeId, HighestBitAndBucketIndex) {
  EXPECT_EQ(NodeId().highest_bit(), -1);
  EXPECT_EQ(id_from_low(1).highest_bit(), 0);
  EXPECT_EQ(id_from_low(2).highest_bit(), 1);
  EXPECT_EQ(id_from_low(0x80000000u).highest_bit(), 31);
  EXPECT_EQ(id_from_low(0x100000000ull).highest_bit(), 32);
  std::array<std::uint8_t, 20> top{};
  top[0] = 0x80;
  EXPECT_EQ(NodeId::from_bytes(top).highest_bit(), 159);
  top[0] = 0;
  top[4] = 0x01;  // bit 159 - 39 = 120
  EXPECT_EQ(NodeId::from_bytes(top).highest_bit(), 120);
  std::array<std::uint8_t, 32> wide{};
  wide[0] = 0x80;
  EXPECT_EQ(NodeId::from_bytes(wide).highest_bit(), 255);
  wide[0] = 0;
  wide[11] = 0x01;  // bit 255 - 95 = 160
  EXPECT_EQ(NodeId::from_bytes(wide).highest_bit(), 160);

  const NodeId self = id_from_low(0b1000);
  EXPECT_EQ(bucket_index(self, self), -1);
  EXPECT_EQ(bucket_index(self, id_from_low(0b1001)), 0);
  EXPECT_EQ(bucket_index(self, id_from_low(0b1010)), 1);
  EXPECT_EQ(bucket_index(self, id_from_low(0b0000)), 3);
  EXPECT_EQ(bucket_index(self, id_from_low(0b11000)), 4);
}

TEST(NodeId, BitAccess) {
  Rng rng(9);
  for (int bits : {kKademliaIdBits, kHydraIdBits}) {
    const NodeId id = NodeId::random(rng, bits);
    const auto bytes = bytes_of(id, bits);
    for (int i = 0; i < bits; ++i)
      EXPECT_EQ(id.bit(i), ((bytes[static_cast<std::size_t>((bits - 1 - i) / 8)] >> (i % 8)) & 1) != 0) << i;
    for (int i = bits; i < NodeId::kMaxBits; ++i) EXPECT_FALSE(id.bit(i)) << i;
  }
}

TEST(NodeId, OrderOfDistancesIsCloseness) {
  const NodeId target = id_from_low(0);
  EXPECT_TRUE(closer(target, id_from_low(3), id_from_low(4)));
  EXPECT_FALSE(closer(target, id_from_low(4), id_from_low(3)));
  EXPECT_FALSE(closer(target, id_from_low(4), id_from_low(4)));
  std::array<std::uint8_t, 20> hi{};
  hi[0] = 1;
  EXPECT_TRUE(closer(target, id_from_low(~0ull), NodeId::from_bytes(hi)));
  std::array<std::uint8_t, 32> wide{};
  wide[0] = 1;
  EXPECT_TRUE(closer(target, NodeId::from_bytes(hi), NodeId::from_bytes(wide)));
}

TEST(NodeId, RandomIdInBucketFallsInThatBucket) {
  Rng rng(11);
  for (int bits : {kKademliaIdBits, kHydraIdBits}) {
    const NodeId self = NodeId::random(rng, bits);
    for (int i = 0; i < bits; ++i)
      for (int rep = 0; rep < 3; ++rep) {
        const NodeId id = random_id_in_bucket(self, i, rng, bits);
        EXPECT_EQ(bucket_index(self, id), i);
        EXPECT_TRUE(id.fits(bits));
      }
    EXPECT_THROW(random_id_in_bucket(self, bits, rng, bits), std::out_of_range);
    EXPECT_THROW(random_id_in_bucket(self, -1, rng, bits), std::out_of_range);
  }
}

}  // namespace
}  // namespace swarmlab::core::dht
