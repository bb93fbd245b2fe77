#include "core/allreduce/halving_doubling.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <vector>

namespace swarmlab::core::allreduce {
namespace {

TEST(HalvingDoubling, NeedsAPowerOfTwo) {
  EXPECT_THROW(HalvingDoubling(0), std::invalid_argument);
  EXPECT_THROW(HalvingDoubling(3), std::invalid_argument);
  EXPECT_THROW(HalvingDoubling(96), std::invalid_argument);
  EXPECT_EQ(HalvingDoubling(1).steps(), 0u);
  EXPECT_EQ(HalvingDoubling(16).steps(), 8u);
  EXPECT_EQ(HalvingDoubling(256).levels(), 8u);
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

// Tracks, per participant and block, which participants' contributions its copy holds, and checks
// that the schedule is symmetric, exchanges equal amounts, and ends with everyone holding every
// contribution in every block.
TEST(HalvingDoubling, EveryoneEndsWithEveryContributionInEveryBlock) {
  for (std::uint32_t P : {1u, 2u, 4u, 8u, 32u, 64u}) {
    const HalvingDoubling hd(P);
    std::vector<std::vector<std::set<std::uint32_t>>> holds(P, std::vector<std::set<std::uint32_t>>(P));
    for (std::uint32_t g = 0; g < P; ++g)
      for (std::uint32_t b = 0; b < P; ++b) holds[g][b] = {g};
    for (std::uint32_t s = 0; s < hd.steps(); ++s) {
      auto next = holds;
      for (std::uint32_t g = 0; g < P; ++g) {
        const std::uint32_t p = hd.partner(g, s);
        ASSERT_EQ(hd.partner(p, s), g);
        ASSERT_EQ(hd.sent(g, s).count, hd.sent(p, s).count);
        const BlockRange in = hd.received(g, s);
        // Halving: what comes in is the half kept, with our own block; doubling: the partner's run.
        ASSERT_EQ(in.contains(g), hd.is_halving(s));
        for (std::uint32_t b = in.first; b < in.first + in.count; ++b) {
          if (hd.is_halving(s)) next[g][b].insert(holds[p][b].begin(), holds[p][b].end());
          else next[g][b] = holds[p][b];
        }
      }
      holds = next;
      if (s + 1 == hd.levels())  // after halving, g's own block holds everyone
        for (std::uint32_t g = 0; g < P; ++g) ASSERT_EQ(holds[g][g].size(), P);
    }
    for (std::uint32_t g = 0; g < P; ++g)
      for (std::uint32_t b = 0; b < P; ++b) ASSERT_EQ(holds[g][b].size(), P) << "P=" << P << " g=" << g << " b=" << b;
  }
}

TEST(HalvingDoubling, RejectsOutOfRangeArguments) {
  const HalvingDoubling hd(4);
  EXPECT_THROW(hd.partner(4, 0), std::out_of_range);
  EXPECT_THROW(hd.sent(0, 4), std::out_of_range);
}

}  // namespace
}  // namespace swarmlab::core::allreduce
