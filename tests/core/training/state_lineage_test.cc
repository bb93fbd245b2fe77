// Lineages name the state a peer holds (core/training/state_lineage.h).
#include "core/training/state_lineage.h"

#include <gtest/gtest.h>

#include <vector>

namespace swarmlab::core::training {
namespace {

TEST(StateLineage, PeersThatAveragedTheSameRoundAgreeAndAFailedPeerStandsAlone) {
  const std::uint64_t before = lineage_after_round(0, 11);
  EXPECT_NE(before, 0u);
  EXPECT_EQ(lineage_after_round(before, 12), lineage_after_round(before, 12));
  EXPECT_NE(lineage_after_round(before, 12), lineage_after_round(before, 13));     // another round
  EXPECT_NE(lineage_after_round(before, 12), lineage_after_round(before + 1, 12)); // another start
  const std::uint64_t a = lineage_diverged(before, 12, 1), b = lineage_diverged(before, 12, 2);
  EXPECT_NE(a, b);
  EXPECT_NE(a, lineage_after_round(before, 12));
  EXPECT_NE(a, kNoState);
}

TEST(StateLineage, SendersThatMissedTheSameSpansAgree) {
  const std::uint64_t before = lineage_after_round(0, 11);
  const std::vector<PeerId> none, lost_3 = {3}, lost_3_and_5 = {3, 5};
  EXPECT_EQ(lineage_after_round(before, 12, none), lineage_after_round(before, 12));
  // Each zeroed the spans it missed, so equal misses mean equal states.
  EXPECT_EQ(lineage_after_round(before, 12, lost_3), lineage_after_round(before, 12, lost_3));
  EXPECT_NE(lineage_after_round(before, 12, lost_3), lineage_after_round(before, 12));
  EXPECT_NE(lineage_after_round(before, 12, lost_3), lineage_after_round(before, 12, lost_3_and_5));
  const std::vector<PeerId> lost_4 = {4};
  EXPECT_NE(lineage_after_round(before, 12, lost_3), lineage_after_round(before, 12, lost_4));
}

TEST(StateLineage, TheCollaborationSettlesOnTheMostHeldLineageTiesToTheSmallest) {
  EXPECT_FALSE(consensus_lineage({}).has_value());
  const std::vector<StateHolder> majority = {{1, 50}, {2, 7}, {3, 50}, {4, 9}};
  EXPECT_EQ(consensus_lineage(majority), 50u);
  const std::vector<StateHolder> all_apart = {{1, 50}, {2, 7}, {3, 9}};
  EXPECT_EQ(consensus_lineage(all_apart), 7u);
  // The order in which records were read does not matter: every peer that sees them settles alike.
  const std::vector<StateHolder> reordered = {{3, 9}, {1, 50}, {2, 7}};
  EXPECT_EQ(consensus_lineage(reordered), 7u);
  const std::vector<StateHolder> tie = {{1, 50}, {2, 50}, {3, 9}, {4, 9}};
  EXPECT_EQ(consensus_lineage(tie), 9u);
}

}  // namespace
}  // namespace swarmlab::core::training
