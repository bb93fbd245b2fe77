#include "learn/sample_stream.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace swarmlab::learn {
namespace {

std::vector<std::uint32_t> draw(SampleStream& s, std::uint64_t n) {
  std::vector<std::uint32_t> out;
  s.next(n, out);
  return out;
}

ShardStreamConfig shard_config(std::uint32_t size, std::uint32_t shard, std::uint32_t buffer, std::uint64_t peer) {
  ShardStreamConfig c;
  c.dataset_size = size;
  c.shard_size = shard;
  c.buffer_size = buffer;
  c.seed = 42;
  c.peer = peer;
  return c;
}

TEST(ShardStream, DeterministicGivenSeedAndPeer) {
  ShardStream a(shard_config(1000, 50, 100, 3)), b(shard_config(1000, 50, 100, 3)), other(shard_config(1000, 50, 100, 4));
  // The way the draws are cut into micro-batches does not matter.
  std::vector<std::uint32_t> pieces;
  for (int n : {1, 7, 64, 300, 628, 1000}) {
    const auto part = draw(b, n);
    pieces.insert(pieces.end(), part.begin(), part.end());
  }
  const auto whole = draw(a, 2000);
  EXPECT_EQ(whole, pieces);
  EXPECT_EQ(a.position(), 2000u);
  EXPECT_NE(draw(other, 2000), whole);
}

TEST(ShardStream, WithoutBufferItStreamsShardsInAPrivateOrder) {
  // Buffer 1: the output is the stream itself, shard after shard, every shard once per pass.
  const std::uint32_t size = 1030, shard = 100;  // 11 shards, the last of 30
  ShardStream s(shard_config(size, shard, 1, 0));
  for (int pass = 0; pass < 3; ++pass) {
    const auto out = draw(s, size);
    std::set<std::uint32_t> seen(out.begin(), out.end());
    EXPECT_EQ(seen.size(), size) << "pass " << pass;
    // Consecutive inside a shard.
    std::size_t breaks = 0;
    for (std::size_t i = 1; i < out.size(); ++i)
      if (out[i] != out[i - 1] + 1) ++breaks;
    EXPECT_LE(breaks, 10u);
  }
  ShardStream peer1(shard_config(size, shard, 1, 1));
  ShardStream peer0(shard_config(size, shard, 1, 0));
  EXPECT_NE(draw(peer0, size), draw(peer1, size));
}

TEST(ShardStream, BufferDrawsOnlyWhatHasArrivedAndShuffles) {
  const std::uint32_t size = 2000, shard = 100, buffer = 256;
  // The same peer's unbuffered stream gives each sample's arrival position.
  ShardStream plain(shard_config(size, shard, 1, 5));
  const auto arrivals = draw(plain, size);
  std::vector<std::uint32_t> arrival(size);
  for (std::uint32_t k = 0; k < size; ++k) arrival[arrivals[k]] = k;

  ShardStream s(shard_config(size, shard, buffer, 5));
  const auto out = draw(s, size - buffer);
  std::set<std::uint32_t> distinct;
  std::size_t in_place = 0;
  for (std::size_t t = 0; t < out.size(); ++t) {
    // Draw t picks among the first t + S samples to arrive (the buffer holds S).
    EXPECT_LT(arrival[out[t]], t + buffer) << "draw " << t;
    distinct.insert(out[t]);
    if (arrival[out[t]] == t) ++in_place;
  }
  // Within one pass nothing is drawn twice, and the order really is shuffled.
  EXPECT_EQ(distinct.size(), out.size());
  EXPECT_LT(in_place, out.size() / 20);
}

TEST(ShardStream, RejectsEmptyConfigurations) {
  EXPECT_THROW(ShardStream(shard_config(0, 10, 10, 0)), std::invalid_argument);
  EXPECT_THROW(ShardStream(shard_config(10, 0, 10, 0)), std::invalid_argument);
  EXPECT_THROW(ShardStream(shard_config(10, 10, 0, 0)), std::invalid_argument);
}

TEST(FixedOrderStream, PositionsAreAPureFunction) {
  FixedOrderStream s(9, 1000, 2);
  std::vector<std::uint32_t> out;
  for (int n : {5, 50, 945, 1000}) s.next(n, out);
  ASSERT_EQ(out.size(), 2000u);
  for (std::uint64_t k = 0; k < out.size(); ++k) EXPECT_EQ(out[k], fixed_order_index(9, 1000, 2, k));
  // Starting anywhere replays the same positions.
  FixedOrderStream later(9, 1000, 2, 1234);
  EXPECT_EQ(draw(later, 10), std::vector<std::uint32_t>(out.begin() + 1234, out.begin() + 1244));
}

TEST(FixedOrderStream, EachPassIsAPermutationAndPeersStartApart) {
  for (std::uint32_t size : {1u, 2u, 3u, 17u, 1000u, 60000u}) {
    for (std::uint64_t pass = 0; pass < 2; ++pass) {
      std::vector<bool> seen(size);
      for (std::uint64_t k = pass * size; k < (pass + 1) * size; ++k) {
        const std::uint32_t i = fixed_order_index(5, size, 0, k);
        ASSERT_LT(i, size);
        EXPECT_FALSE(seen[i]) << "size " << size << " position " << k;
        seen[i] = true;
      }
    }
  }
  FixedOrderStream p0(5, 60000, 0), p1(5, 60000, 1);
  const auto a = draw(p0, 1000), b = draw(p1, 1000);
  std::set<std::uint32_t> common(a.begin(), a.end());
  std::size_t overlap = 0;
  for (auto i : b) overlap += common.count(i);
  EXPECT_EQ(overlap, 0u);  // disjoint stretches of one permutation
  // A new pass is a new permutation.
  EXPECT_NE(fixed_order_index(5, 60000, 0, 0), fixed_order_index(5, 60000, 0, 60000));
}

TEST(ListStream, PlaysTheListAndStopsAtItsEnd) {
  ListStream s({4, 2, 9});
  EXPECT_EQ(draw(s, 2), (std::vector<std::uint32_t>{4, 2}));
  EXPECT_THROW(draw(s, 2), std::out_of_range);
  s.append({1});
  EXPECT_EQ(draw(s, 2), (std::vector<std::uint32_t>{9, 1}));
  EXPECT_EQ(s.position(), 4u);
}

}  // namespace
}  // namespace swarmlab::learn
