#include "core/dht/node_id.h"

#include <gtest/gtest.h>

#include "core/dht/sha1.h"

namespace swarmlab::core::dht {
namespace {

NodeId id_from_low(std::uint64_t low) {
  std::array<std::uint8_t, 20> b{};
  for (int i = 0; i < 8; ++i) b[19 - i] = static_cast<std::uint8_t>(low >> (8 * i));
  return NodeId::from_bytes(b);
}

TEST(NodeId, BytesRoundTripAndHex) {
  Rng rng(3);
  for (int i = 0; i < 100; ++i) {
    const NodeId id = NodeId::random(rng);
    EXPECT_EQ(NodeId::from_bytes(id.to_bytes()), id);
  }
  std::array<std::uint8_t, 20> b{};
  b[0] = 0xAB;
  b[19] = 0x01;
  EXPECT_EQ(NodeId::from_bytes(b).hex(), "ab00000000000000000000000000000000000001");
}

TEST(NodeId, KeyIdIsSha1OfTheKey) {
  const Sha1Digest d = sha1("abc");
  EXPECT_EQ(NodeId::of_key("abc").to_bytes(), d);
  EXPECT_EQ(NodeId::of_key("abc").hex(), "a9993e364706816aba3e25717850c26c9cd0d89d");
}

TEST(NodeId, XorDistanceIsAMetric) {
  Rng rng(5);
  for (int i = 0; i < 200; ++i) {
    const NodeId a = NodeId::random(rng), b = NodeId::random(rng), c = NodeId::random(rng);
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

  const NodeId self = id_from_low(0b1000);
  EXPECT_EQ(bucket_index(self, self), -1);
  EXPECT_EQ(bucket_index(self, id_from_low(0b1001)), 0);
  EXPECT_EQ(bucket_index(self, id_from_low(0b1010)), 1);
  EXPECT_EQ(bucket_index(self, id_from_low(0b0000)), 3);
  EXPECT_EQ(bucket_index(self, id_from_low(0b11000)), 4);
}

TEST(NodeId, BitAccess) {
  Rng rng(9);
  const NodeId id = NodeId::random(rng);
  const auto bytes = id.to_bytes();
  for (int i = 0; i < 160; ++i) EXPECT_EQ(id.bit(i), ((bytes[(159 - i) / 8] >> (i % 8)) & 1) != 0) << i;
}

TEST(NodeId, OrderOfDistancesIsCloseness) {
  const NodeId target = id_from_low(0);
  EXPECT_TRUE(closer(target, id_from_low(3), id_from_low(4)));
  EXPECT_FALSE(closer(target, id_from_low(4), id_from_low(3)));
  EXPECT_FALSE(closer(target, id_from_low(4), id_from_low(4)));
  std::array<std::uint8_t, 20> hi{};
  hi[0] = 1;
  EXPECT_TRUE(closer(target, id_from_low(~0ull), NodeId::from_bytes(hi)));
}

TEST(NodeId, RandomIdInBucketFallsInThatBucket) {
  Rng rng(11);
  const NodeId self = NodeId::random(rng);
  for (int i = 0; i < 160; ++i)
    for (int rep = 0; rep < 3; ++rep) EXPECT_EQ(bucket_index(self, random_id_in_bucket(self, i, rng)), i);
  EXPECT_THROW(random_id_in_bucket(self, 160, rng), std::out_of_range);
  EXPECT_THROW(random_id_in_bucket(self, -1, rng), std::out_of_range);
}

}  // namespace
}  // namespace swarmlab::core::dht
