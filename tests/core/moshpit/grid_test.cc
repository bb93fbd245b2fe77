#include "core/moshpit/grid.h"

#include <map>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace swarmlab::core::moshpit {
namespace {

TEST(GridTest, ShapeUsesTheFewestAxesAndTheMostCubicSide) {
  auto expect = [](std::uint64_t n, std::uint64_t m, std::uint64_t dims, std::uint64_t side) {
    const GridShape s = grid_shape(n, m);
    EXPECT_EQ(s.dims, dims) << n << " " << m;
    EXPECT_EQ(s.side, side) << n << " " << m;
  };
  expect(512, 8, 3, 8);
  expect(16, 16, 1, 16);
  expect(16, 100, 1, 16);  // groups never exceed the peers
  expect(16, 4, 2, 4);
  expect(16, 3, 3, 3);     // 3^3 = 27 slots for 16 peers
  expect(16, 2, 4, 2);
  expect(64, 5, 3, 4);     // a full 4×4×4 grid rather than a ragged 5×5×5 one
  expect(513, 8, 4, 5);
  expect(10000, 100, 2, 100);
  expect(2, 2, 1, 2);
  expect(3, 2, 2, 2);
  expect(std::uint64_t{1} << 62, 2, 62, 2);
  EXPECT_TRUE(grid_shape(512, 8).complete());
  EXPECT_TRUE(grid_shape(64, 5).complete());
  EXPECT_FALSE(grid_shape(513, 8).complete());
  EXPECT_THROW(grid_shape(1, 2), std::invalid_argument);
  EXPECT_THROW(grid_shape(10, 1), std::invalid_argument);
}

TEST(GridTest, EveryAxisPartitionsThePeersIntoLinesOfTheGrid) {
  for (auto [n, m] : {std::pair{512, 8}, {513, 8}, {100, 3}, {7, 2}, {1000, 10}, {37, 6}, {2, 2}}) {
    const Grid grid(n, m);
    for (std::size_t k = 0; k < grid.dims(); ++k) {
      const Partition& part = grid.groups(k);
      std::vector<int> seen(n, 0);
      for (std::size_t g = 0; g < part.groups(); ++g) {
        const auto members = part.group(g);
        ASSERT_FALSE(members.empty());
        ASSERT_LE(members.size(), static_cast<std::size_t>(m));
        const auto first = grid.coordinates(members[0]);
        for (std::uint32_t peer : members) {
          ++seen[peer];
          EXPECT_EQ(grid.group_of(peer, k), g);
          auto c = grid.coordinates(peer);
          for (std::size_t a = 0; a < grid.dims(); ++a)
            if (a != k) {
              EXPECT_EQ(c[a], first[a]) << "members differ only along axis " << k;
            }
        }
      }
      for (int count : seen) ASSERT_EQ(count, 1);
    }
  }
}

TEST(GridTest, RoundsCycleThroughTheAxes) {
  const Grid grid(512, 8);
  EXPECT_EQ(grid.axis_of_round(0), 0u);
  EXPECT_EQ(grid.axis_of_round(4), 1u);
  EXPECT_EQ(&grid.groups_in_round(5), &grid.groups(2));
  // After one round per axis each peer has (indirectly) met everyone: the product of the group
  // sizes along a peer's path is 8^3.
  EXPECT_EQ(grid.groups(0).groups(), 64u);
  EXPECT_EQ(grid.groups(0).group(0).size(), 8u);
}

TEST(GridTest, GroupSizesMatchTheBuiltGroups) {
  for (std::uint64_t n = 2; n <= 300; n += (n < 40 ? 1 : 7)) {
    for (std::uint64_t m : {2, 3, 4, 5, 7, 8, 16, 300}) {
      const Grid grid(n, m);
      for (std::size_t k = 0; k < grid.dims(); ++k) {
        std::map<std::uint64_t, std::uint64_t, std::greater<>> built;
        for (std::size_t g = 0; g < grid.groups(k).groups(); ++g) ++built[grid.groups(k).group(g).size()];
        std::map<std::uint64_t, std::uint64_t, std::greater<>> counted;
        for (const auto& gc : group_sizes(grid.shape(), k)) counted[gc.size] += gc.count;
        ASSERT_EQ(built, counted) << "n=" << n << " m=" << m << " axis " << k;
      }
    }
  }
}

TEST(GridTest, GroupSizesWorkForHugeCounts) {
  const GridShape s = grid_shape(1'000'000'007, 1000);  // a prime: partial groups on every axis
  std::uint64_t peers = 0;
  for (const auto& g : group_sizes(s, s.dims - 1)) peers += g.size * g.count;
  EXPECT_EQ(peers, 1'000'000'007u);
}

}  // namespace
}  // namespace swarmlab::core::moshpit
