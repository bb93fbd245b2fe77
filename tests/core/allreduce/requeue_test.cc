#include "core/allreduce/requeue.h"

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <vector>

namespace swarmlab::core::allreduce {
namespace {

ReplicaGroupPlan four_groups() {
  ReplicaGroupPlan plan;
  plan.round_id = 7;
  plan.groups = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};
  plan.weights = {1, 2, 3, 4};
  plan.length = 1000;
  return plan;
}

TEST(Requeue, LostGroupsAreThoseAnyLeaderRecorded) {
  std::vector<std::optional<ReplicaOutcome>> outcomes(4);
  outcomes[0] = ReplicaOutcome{};
  outcomes[0]->lost_chunks = {{0, 2, 0, 500}, {1, 2, 500, 250}};
  outcomes[2] = ReplicaOutcome{};
  outcomes[2]->lost_chunks = {{3, 1, 0, 1000}};
  EXPECT_EQ(lost_groups(outcomes), (std::set<std::uint32_t>{1, 2}));
  EXPECT_TRUE(lost_groups(std::vector<std::optional<ReplicaOutcome>>(3)).empty());
}

TEST(Requeue, SurvivorsTakeTheLostSamplesInProportionToTheirOwn) {
  const ReplicaGroupPlan next = requeue_lost(four_groups(), {1});
  EXPECT_EQ(next.round_id, 8u);
  EXPECT_EQ(next.groups, (std::vector<std::vector<PeerId>>{{0, 1}, {4, 5}, {6, 7}}));
  // The lost group's 2 samples go to the others as 1:3:4.
  ASSERT_EQ(next.weights.size(), 3u);
  EXPECT_DOUBLE_EQ(next.weights[0], 1.25);
  EXPECT_DOUBLE_EQ(next.weights[1], 3.75);
  EXPECT_DOUBLE_EQ(next.weights[2], 5.0);
  EXPECT_NO_THROW(next.validate());  // three groups: one extra folded in
  EXPECT_EQ(requeue_lost(four_groups(), {}).weights, four_groups().weights);
}

TEST(Requeue, RejectsGroupsNotInThePlanAndTotalLoss) {
  EXPECT_THROW(requeue_lost(four_groups(), {4}), std::invalid_argument);
  EXPECT_THROW(requeue_lost(four_groups(), {0, 1, 2, 3}), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::allreduce
