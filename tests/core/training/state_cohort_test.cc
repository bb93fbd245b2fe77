// Who of a group averages together (core/training/state_cohort.h): members behind the newest
// announced state step are left out, alike at every member; members announcing no state stay.
#include "core/training/state_cohort.h"

#include <gtest/gtest.h>

#include "core/matchmaking/announcement_codec.h"

namespace swarmlab::core::training {
namespace {

matchmaking::GroupMember member(PeerId peer, std::optional<std::uint64_t> state_step) {
  return {peer, false, matchmaking::encode_announcement({{10, 1e8, 1e8, false}, state_step})};
}

TEST(StateCohort, MembersBehindTheNewestAnnouncedStateAreLeftOutInGroupOrder) {
  const matchmaking::Group group{42, 3,
                                 {member(3, 15), member(1, 14), member(7, std::nullopt), member(5, 15),
                                  {9, true, std::vector<std::uint8_t>{1, 2, 3}}, member(2, 14)}};
  const std::optional<matchmaking::Group> left = newest_state_cohort(group);
  ASSERT_TRUE(left.has_value());
  const matchmaking::Group& cohort = *left;
  EXPECT_EQ(cohort.group_id, 42u);
  EXPECT_EQ(cohort.leader, 3u);
  // The reducer without a state and the member whose announcement does not decode stay.
  EXPECT_EQ(cohort.peers(), (std::vector<PeerId>{3, 7, 5, 9}));
  EXPECT_EQ(cohort.members[3], group.members[4]);
  // Every member computes it from the same announcements, so every copy agrees.
  EXPECT_EQ(newest_state_cohort(matchmaking::Group(group)), cohort);
}

TEST(StateCohort, AGroupAtOneStepOrWithoutStatesIsKeptWhole) {
  const matchmaking::Group same{1, 1, {member(1, 8), member(2, std::nullopt), member(3, 8)}};
  EXPECT_EQ(newest_state_cohort(same), std::nullopt);  // whole: nothing to copy
  const matchmaking::Group none{2, 1, {member(1, std::nullopt), member(2, std::nullopt)}};
  EXPECT_EQ(newest_state_cohort(none), std::nullopt);
  // The leader itself may be behind: it is left out like anyone else.
  const matchmaking::Group leader_behind{3, 1, {member(1, 0), member(2, 1), member(3, 1)}};
  EXPECT_EQ(newest_state_cohort(leader_behind)->peers(), (std::vector<PeerId>{2, 3}));
}

}  // namespace
}  // namespace swarmlab::core::training
