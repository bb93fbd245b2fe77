// The shared planner input of a group (core/training/group_input_cache.h): every member of a group
// a process hosts gets the same object, which is what the group's capacities say, and a group that
// differs in anything the input depends on gets a new one.
#include "core/training/group_input_cache.h"

#include <gtest/gtest.h>

#include "core/matchmaking/announcement_codec.h"
#include "core/matchmaking/group_plan.h"

namespace swarmlab::core::training {
namespace {

matchmaking::Group three_members(std::uint64_t id) {
  using matchmaking::encode_announcement;
  return matchmaking::Group{id, 1,
                            {{1, false, encode_announcement({{100, 1e8, 5e7, false}})},
                             {2, false, encode_announcement({{50, 2e7, 1e7, false}})},
                             {3, true, encode_announcement({{80, 5e7, 5e7, true}})}}};
}

TEST(GroupInputCache, MembersOfOneGroupShareOneInputThatTheCapacitiesDescribe) {
  GroupInputCache cache;
  const matchmaking::Group g = three_members(7);
  const auto first = cache.input(g, 4096, 1e9, nullptr);
  planner::PlannerInput expected = matchmaking::group_capacities(g);
  expected.target_batch = 4096;
  expected.gradient_bits = 1e9;
  EXPECT_EQ(*first, expected);
  // Another member's copy of the group (the same attachments), and the next group of the same
  // members: the same object.
  matchmaking::Group copy = g;
  EXPECT_EQ(cache.input(copy, 4096, 1e9, nullptr), first);
  EXPECT_EQ(cache.input(three_members(8), 4096, 1e9, nullptr), cache.input(three_members(8), 4096, 1e9, nullptr));
  EXPECT_EQ(*cache.input(three_members(8), 4096, 1e9, nullptr), *first);  // new attachments, equal bytes

  // Anything else the input depends on: a new one.
  const auto batch = cache.input(g, 2048, 1e9, nullptr);
  EXPECT_NE(batch, first);
  EXPECT_EQ(batch->target_batch, 2048);
  EXPECT_NE(cache.input(g, 4096, 2e9, nullptr)->gradient_bits, first->gradient_bits);
  matchmaking::Group fewer = g;
  fewer.members.pop_back();
  EXPECT_EQ(cache.input(fewer, 4096, 1e9, nullptr)->peers.size(), 2u);
  EXPECT_EQ(first->peers.size(), 3u);  // an input returned earlier never changes
}

}  // namespace
}  // namespace swarmlab::core::training
