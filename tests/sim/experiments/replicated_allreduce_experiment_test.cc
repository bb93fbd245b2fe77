#include "sim/experiments/replicated_allreduce_experiment.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace swarmlab::sim {
namespace {

ReplicatedAllReduceConfig small(std::uint32_t replicas) {
  ReplicatedAllReduceConfig c;
  c.groups = 8;
  c.replicas = replicas;
  c.parameters = 4'000'000;
  return c;
}

TEST(ReplicatedAllReduceExperiment, TimesEveryFailureOnTheFlowModel) {
  const auto r = run_replicated_allreduce(small(3));
  ASSERT_EQ(r.rounds.size(), 4u);
  const ReplicaRoundRecord& none = r.rounds[0];
  EXPECT_TRUE(none.completed);
  EXPECT_EQ(none.min_fraction_averaged, 1.0);
  EXPECT_GT(none.round_s, 0);
  EXPECT_GT(r.butterfly_s, 0);
  EXPECT_GT(r.planner_s, 0);
  // Moshpit over the 8 participants: groups of at most 3 (⌈√8⌉) on a 3 × 3 grid, two rounds.
  EXPECT_EQ(r.moshpit_group_size, 3u);
  EXPECT_EQ(r.moshpit_rounds, 2u);
  EXPECT_GT(r.moshpit_s, 0);
  // Followers receive two copies of what each leader receives: two thirds of the bytes.
  EXPECT_NEAR(static_cast<double>(none.replication_bytes) / static_cast<double>(none.bytes_sent), 2.0 / 3, 0.02);

  const ReplicaRoundRecord& follower = r.rounds[1];
  EXPECT_EQ(follower.failure, ReplicaFailure::Follower);
  EXPECT_TRUE(follower.completed);
  EXPECT_EQ(follower.min_fraction_averaged, 1.0);
  EXPECT_FALSE(follower.took_over_at);
  EXPECT_LT(follower.round_s, none.round_s * 1.1);

  const ReplicaRoundRecord& leader = r.rounds[2];
  EXPECT_TRUE(leader.completed);
  EXPECT_EQ(leader.min_fraction_averaged, 1.0);
  ASSERT_TRUE(leader.took_over_at);
  EXPECT_GT(leader.round_s, none.round_s + 0.15);  // at least an election
  EXPECT_EQ(leader.lost_chunk_bytes, 0u);

  const ReplicaRoundRecord& group = r.rounds[3];
  EXPECT_TRUE(group.completed);  // no stall
  EXPECT_LT(group.min_fraction_averaged, 1.0);
  EXPECT_GT(group.lost_chunk_bytes, 0u);
  EXPECT_LT(group.round_s, none.round_s * 1.2);

  // The next round drops the lost group and re-queues its samples: 7 groups average 8 groups'
  // worth, completely, without a stall (the folded-in extra's whole vector costs a round at most).
  ASSERT_TRUE(r.after_group_loss);
  const ReplicaRoundRecord& next = *r.after_group_loss;
  EXPECT_EQ(next.groups, 7u);
  EXPECT_DOUBLE_EQ(next.weight, 8.0);
  EXPECT_TRUE(next.completed);
  EXPECT_EQ(next.min_fraction_averaged, 1.0);
  EXPECT_EQ(next.lost_chunk_bytes, 0u);
  EXPECT_LT(next.round_s, none.round_s * 2.2);
}

TEST(ReplicatedAllReduceExperiment, RunsAnyGroupCount) {
  auto c = small(1);
  c.groups = 12;  // 8 exchange, 4 folded in
  const auto r = run_replicated_allreduce(c);
  EXPECT_TRUE(r.rounds[0].completed);
  EXPECT_EQ(r.rounds[0].min_fraction_averaged, 1.0);
  EXPECT_EQ(r.rounds[0].groups, 12u);
  ASSERT_TRUE(r.after_group_loss);
  EXPECT_EQ(r.after_group_loss->groups, 11u);
  EXPECT_EQ(r.after_group_loss->min_fraction_averaged, 1.0);
}

TEST(ReplicatedAllReduceExperiment, OneReplicaHasNoFollowerOrLeaderCase) {
  const auto r = run_replicated_allreduce(small(1));
  ASSERT_EQ(r.rounds.size(), 2u);
  EXPECT_EQ(r.rounds[1].failure, ReplicaFailure::Group);
  EXPECT_EQ(r.rounds[0].replication_bytes, 0u);
}

TEST(ReplicatedAllReduceExperiment, IsDeterministic) {
  const auto a = run_replicated_allreduce(small(3)), b = run_replicated_allreduce(small(3));
  for (std::size_t i = 0; i < a.rounds.size(); ++i) {
    EXPECT_EQ(a.rounds[i].round_s, b.rounds[i].round_s);
    EXPECT_EQ(a.rounds[i].bytes_sent, b.rounds[i].bytes_sent);
  }
  EXPECT_EQ(a.after_group_loss->round_s, b.after_group_loss->round_s);
}

TEST(ReplicatedAllReduceExperiment, RejectsBadConfigurations) {
  auto c = small(3);
  c.groups = 1;
  EXPECT_THROW(run_replicated_allreduce(c), std::invalid_argument);
  c = small(0);
  EXPECT_THROW(run_replicated_allreduce(c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
