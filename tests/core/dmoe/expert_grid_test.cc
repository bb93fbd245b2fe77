// The uid grid of a DMoE layer and its DHT keys (core/dmoe/expert_grid.h).
#include "core/dmoe/expert_grid.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace swarmlab::core::dmoe {
namespace {

TEST(DmoeGrid, CheckAcceptsTheLimitsAndRejectsWhatIsBeyondThem) {
  EXPECT_NO_THROW((ExpertGrid{"ffn", 1, 1}.check()));
  EXPECT_NO_THROW((ExpertGrid{"ffn_0-A", kMaxGridDims, kMaxGridSide}.check()));
  EXPECT_NO_THROW((ExpertGrid{std::string(kMaxLayerNameBytes, 'x'), 2, 4}.check()));

  EXPECT_THROW((ExpertGrid{"", 2, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{std::string(kMaxLayerNameBytes + 1, 'x'), 2, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"ffn.0", 2, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"ffn 0", 2, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"ffn\n", 2, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"caf\xc3\xa9", 2, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"ffn", 0, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"ffn", kMaxGridDims + 1, 4}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"ffn", 2, 0}.check()), std::invalid_argument);
  EXPECT_THROW((ExpertGrid{"ffn", 2, kMaxGridSide + 1}.check()), std::invalid_argument);
}

TEST(DmoeGrid, ContainsOnlyUidsOfItsDimsBelowItsSide) {
  const ExpertGrid g{"ffn", 3, 5};
  EXPECT_TRUE(g.contains({0, 0, 0}));
  EXPECT_TRUE(g.contains({4, 4, 4}));
  EXPECT_FALSE(g.contains({4, 5, 4}));
  EXPECT_FALSE(g.contains({1, 2}));
  EXPECT_FALSE(g.contains({1, 2, 3, 4}));
  EXPECT_FALSE(g.contains({}));
}

TEST(DmoeGrid, CapacityIsSideToTheDimsAndSaturates) {
  EXPECT_EQ((ExpertGrid{"ffn", 1, 1}.capacity()), 1u);
  EXPECT_EQ((ExpertGrid{"ffn", 3, 5}.capacity()), 125u);
  EXPECT_EQ((ExpertGrid{"ffn", 3, kMaxGridSide}.capacity()), 1ull << 48);
  EXPECT_EQ((ExpertGrid{"ffn", 8, kMaxGridSide}.capacity()), 1ull << 63);  // 2^128 saturates
  EXPECT_EQ((ExpertGrid{"ffn", 4, 3}.capacity()), 81u);
}

TEST(DmoeGrid, UidAtEnumeratesTheGridInRowMajorOrder) {
  const ExpertGrid g{"ffn", 3, 4};
  EXPECT_EQ(g.uid_at(0), (ExpertUid{0, 0, 0}));
  EXPECT_EQ(g.uid_at(1), (ExpertUid{0, 0, 1}));
  EXPECT_EQ(g.uid_at(4), (ExpertUid{0, 1, 0}));
  EXPECT_EQ(g.uid_at(1 * 16 + 2 * 4 + 3), (ExpertUid{1, 2, 3}));
  EXPECT_EQ(g.uid_at(63), (ExpertUid{3, 3, 3}));
  EXPECT_THROW(g.uid_at(64), std::out_of_range);
  std::set<ExpertUid> all;
  ExpertUid previous;
  for (std::uint64_t i = 0; i < g.capacity(); ++i) {
    const ExpertUid u = g.uid_at(i);
    EXPECT_TRUE(g.contains(u));
    if (i) {
      EXPECT_LT(previous, u);  // row-major order is the uids' own order
    }
    previous = u;
    all.insert(u);
  }
  EXPECT_EQ(all.size(), 64u);
  const ExpertGrid big{"ffn", 2, kMaxGridSide};
  EXPECT_EQ(big.uid_at(big.capacity() - 1), (ExpertUid{kMaxGridSide - 1, kMaxGridSide - 1}));
}

TEST(DmoeGrid, KeysSpellTheLayerAndThePrefix) {
  const ExpertGrid g{"ffn", 3, 256};
  EXPECT_EQ(uid_text(std::vector<std::uint32_t>{3, 17}), "3.17");
  EXPECT_EQ(uid_text(std::vector<std::uint32_t>{}), "");
  EXPECT_EQ(prefix_key(g, std::vector<std::uint32_t>{}), "ffn.");
  EXPECT_EQ(prefix_key(g, std::vector<std::uint32_t>{3}), "ffn.3.");
  EXPECT_EQ(prefix_key(g, std::vector<std::uint32_t>{3, 17}), "ffn.3.17.");
  EXPECT_THROW(prefix_key(g, std::vector<std::uint32_t>{3, 17, 5}), std::invalid_argument);  // a whole uid is no prefix
  EXPECT_EQ(checkpoint_key(g, {3, 17, 255}), "ffn.checkpoint.3.17.255");
  // A checkpoint key is never a prefix key: a prefix's parts after the layer are numbers.
  EXPECT_NE(checkpoint_key(g, {0, 0, 0}), prefix_key(g, std::vector<std::uint32_t>{0, 0}));
}

TEST(DmoeGrid, CoordinateSubkeysRoundTripAndRejectWhatIsNotOne) {
  for (const std::uint32_t c : {0u, 1u, 127u, 128u, 300u, kMaxGridSide - 1}) {
    const auto bytes = coordinate_subkey(c);
    EXPECT_EQ(parse_coordinate_subkey(bytes), c);
  }
  EXPECT_EQ(coordinate_subkey(5), (std::vector<std::uint8_t>{5}));
  EXPECT_EQ(coordinate_subkey(128), (std::vector<std::uint8_t>{0x80, 0x01}));
  EXPECT_FALSE(parse_coordinate_subkey(coordinate_subkey(kMaxGridSide)).has_value());
  EXPECT_FALSE(parse_coordinate_subkey(std::vector<std::uint8_t>{}).has_value());
  EXPECT_FALSE(parse_coordinate_subkey(std::vector<std::uint8_t>{0x85}).has_value());        // truncated
  EXPECT_FALSE(parse_coordinate_subkey(std::vector<std::uint8_t>{5, 0}).has_value());        // trailing byte
  EXPECT_FALSE(parse_coordinate_subkey(std::vector<std::uint8_t>{0x85, 0x00}).has_value());  // not shortest
}

}  // namespace
}  // namespace swarmlab::core::dmoe

namespace swarmlab::core::dmoe {
namespace {

TEST(DmoeGrid, LeafEntriesRoundTripAndRefuseWhatIsNotOne) {
  const std::vector<std::uint32_t> coords{0, 3, 127};
  EXPECT_EQ(decode_coordinates(encode_coordinates(coords), 128), coords);
  EXPECT_FALSE(decode_coordinates(encode_coordinates(coords), 127).has_value());  // 127 is off a side-127 grid
  const std::vector<std::uint32_t> unsorted{3, 1}, repeated{2, 2}, none{};
  EXPECT_FALSE(decode_coordinates(encode_coordinates(unsorted), 8).has_value());
  EXPECT_FALSE(decode_coordinates(encode_coordinates(repeated), 8).has_value());
  EXPECT_FALSE(decode_coordinates(encode_coordinates(none), 8).has_value());
  auto trailing = encode_coordinates(coords);
  trailing.push_back(0);
  EXPECT_FALSE(decode_coordinates(trailing, 128).has_value());
  EXPECT_FALSE(decode_coordinates(std::vector<std::uint8_t>{9, 1}, 128).has_value());  // count beyond the bytes
  EXPECT_EQ(decode_runtime(encode_runtime(70000)), 70000u);
}

}  // namespace
}  // namespace swarmlab::core::dmoe
