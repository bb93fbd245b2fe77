#include "core/allreduce/halving_doubling.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

namespace swarmlab::core::allreduce {
namespace {

TEST(HalvingDoubling, StepsFollowTheLargestPowerOfTwo) {
  EXPECT_THROW(HalvingDoubling(0), std::invalid_argument);
  EXPECT_EQ(HalvingDoubling(1).steps(), 0u);
  EXPECT_EQ(HalvingDoubling(16).steps(), 8u);
  EXPECT_EQ(HalvingDoubling(256).levels(), 8u);
  // 96 = 64 + 32 extras: the 64 exchange in 12 steps, with one step to fold the extras in and one
  // to serve them.
  const HalvingDoubling hd(96);
  EXPECT_EQ(hd.blocks(), 64u);
  EXPECT_EQ(hd.extras(), 32u);
  EXPECT_EQ(hd.steps(), 14u);
  EXPECT_EQ(HalvingDoubling(3).steps(), 4u);
}

TEST(HalvingDoubling, FirstStepPairsAtHalfTheParticipants) {
  const HalvingDoubling hd(8);
  EXPECT_EQ(hd.partner(0, 0), 4u);
  EXPECT_EQ(hd.partner(5, 0), 1u);
  EXPECT_EQ(hd.sent(0, 0), (BlockRange{4, 4}));
  EXPECT_EQ(hd.sent(4, 0), (BlockRange{0, 4}));
  EXPECT_EQ(hd.partner(0, 2), 1u);            // last halving step: distance 1
  EXPECT_EQ(hd.partner(0, 3), 1u);            // first doubling step: distance 1
  EXPECT_EQ(hd.sent(6, 3), (BlockRange{6, 1}));
  EXPECT_EQ(hd.sent(6, 5), (BlockRange{4, 4}));
}

TEST(HalvingDoubling, ExtrasAreFoldedInFirstAndServedLast) {
  const HalvingDoubling hd(6);  // 4 exchange, extras 4 and 5 pair with 0 and 1
  EXPECT_EQ(hd.partner(4, 0), 0u);
  EXPECT_EQ(hd.partner(1, 0), 5u);
  EXPECT_FALSE(hd.partner(2, 0));
  EXPECT_EQ(hd.sent(4, 0), (BlockRange{0, 4}));  // the extra's whole vector
  EXPECT_TRUE(hd.sent(0, 0).empty());
  EXPECT_TRUE(hd.merges(0));
  EXPECT_FALSE(hd.partner(4, 1));               // the extras stand by during the exchange
  EXPECT_EQ(hd.partner(0, 1), 2u);              // first halving step among the four
  EXPECT_EQ(hd.sent(0, 5), (BlockRange{0, 4})); // the result back to extra 4
  EXPECT_TRUE(hd.received(0, 5).empty());
  EXPECT_FALSE(hd.merges(5));
}

// Tracks, per participant and block, which participants' contributions its copy holds, and checks
// that the schedule pairs mutually, exchanges equal amounts where both sides send, and ends with
// everyone holding every contribution in every block.
TEST(HalvingDoubling, EveryoneEndsWithEveryContributionInEveryBlock) {
  std::vector<std::uint32_t> sizes;
  for (std::uint32_t P = 1; P <= 40; ++P) sizes.push_back(P);
  for (std::uint32_t P : {63u, 64u, 65u, 96u, 127u}) sizes.push_back(P);
  for (std::uint32_t P : sizes) {
    const HalvingDoubling hd(P);
    const std::uint32_t Q = hd.blocks();
    std::vector<std::vector<std::set<std::uint32_t>>> holds(P, std::vector<std::set<std::uint32_t>>(Q));
    for (std::uint32_t g = 0; g < P; ++g)
      for (std::uint32_t b = 0; b < Q; ++b) holds[g][b] = {g};
    for (std::uint32_t s = 0; s < hd.steps(); ++s) {
      auto next = holds;
      for (std::uint32_t g = 0; g < P; ++g) {
        const auto p = hd.partner(g, s);
        if (!p) {
          ASSERT_TRUE(hd.sent(g, s).empty());
          ASSERT_TRUE(hd.received(g, s).empty());
          continue;
        }
        ASSERT_EQ(hd.partner(*p, s), g);
        const BlockRange out = hd.sent(g, s), in = hd.received(g, s);
        ASSERT_EQ(in, hd.sent(*p, s));
        ASSERT_FALSE(out.empty() && in.empty()) << "P=" << P << " step " << s;
        if (!out.empty() && !in.empty()) {
          ASSERT_EQ(out.count, in.count);
          // Halving: what comes in is the half kept, with our own block; doubling: the partner's run.
          ASSERT_EQ(in.contains(g), hd.merges(s));
        }
        for (std::uint32_t b = in.first; b < in.first + in.count; ++b) {
          if (hd.merges(s)) next[g][b].insert(holds[*p][b].begin(), holds[*p][b].end());
          else next[g][b] = holds[*p][b];
        }
      }
      holds = next;
    }
    for (std::uint32_t g = 0; g < P; ++g)
      for (std::uint32_t b = 0; b < Q; ++b) ASSERT_EQ(holds[g][b].size(), P) << "P=" << P << " g=" << g << " b=" << b;
  }
}

TEST(HalvingDoubling, RejectsOutOfRangeArguments) {
  const HalvingDoubling hd(4);
  EXPECT_THROW(hd.partner(4, 0), std::out_of_range);
  EXPECT_THROW(hd.sent(0, 4), std::out_of_range);
  EXPECT_THROW(HalvingDoubling(5).partner(0, 6), std::out_of_range);
}

}  // namespace
}  // namespace swarmlab::core::allreduce
