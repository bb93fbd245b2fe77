// Learning@home on the DHT with churn (docs/learning-at-home.md §8), at a size a test can run:
// beam search finds k live experts within its lookup bound, and when runtimes fail their experts
// are taken over from checkpoints while training goes on.
#include "sim/experiments/dmoe_swarm.h"

#include <gtest/gtest.h>

namespace swarmlab::sim {
namespace {

DmoeSwarmConfig small() {
  DmoeSwarmConfig c;
  c.runtimes = 200;
  c.trainers = 10;
  c.grid_side = 16;
  c.hours = 0.1;
  c.churn_per_hour = 0;
  c.settle_s = 120;
  c.announce = {120, 60};  // several announcement rounds inside the 6 measured minutes
  return c;
}

TEST(DmoeSwarm, BeamSearchFindsKLiveExpertsWithinItsLookupBound) {
  const DmoeSwarmResult r = run_dmoe_swarm(small());
  EXPECT_GT(r.batches, 50u);
  EXPECT_EQ(r.dropped, 0u);
  ASSERT_GT(r.searches, 100u);
  EXPECT_GE(r.found_k_share, 0.99);
  // 1 + k (d - 1) lookups at most, far inside the paper's d k M.
  EXPECT_LE(r.max_lookups, 1u + 4u * (2u - 1u));
  EXPECT_DOUBLE_EQ(r.lookup_bound, 2.0 * 4 * 16);
  EXPECT_GT(r.dht_messages_per_peer_minute, 0);
  EXPECT_GT(r.announcement_stores, 0u);
}

TEST(DmoeSwarm, TheSameSeedGivesTheSameRun) {
  const DmoeSwarmResult a = run_dmoe_swarm(small()), b = run_dmoe_swarm(small());
  EXPECT_EQ(a.batches, b.batches);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(a.mean_batch_s, b.mean_batch_s);
  EXPECT_EQ(a.dht_bytes_per_peer_minute, b.dht_bytes_per_peer_minute);
}

// Runtimes fail for good while trainers train: calls in flight to them fail (a crash breaks the
// link, a silent departure times out) and the mixtures renormalise over the rest; the watchers
// take the dead runtimes' experts over from their checkpoints; training goes on.
TEST(DmoeSwarm, FailedRuntimesExpertsAreTakenOverAndTrainingGoesOn) {
  DmoeSwarmConfig c = small();
  c.runtimes = 60;
  c.grid_side = 8;
  c.hours = 1;
  c.churn_per_hour = 0.3;
  c.announce = {60, 30};
  c.keeper = {30, 3600, 30, 2, 3};
  const DmoeSwarmResult r = run_dmoe_swarm(c);
  EXPECT_GE(r.failures, 8u);
  EXPECT_GT(r.taken_over, 4u);
  EXPECT_GT(r.expert_timeouts + r.expert_link_failures, 0u);
  EXPECT_GT(r.batches, 300u);
  EXPECT_LT(r.dropped * 20, r.batches);
}

TEST(DmoeSwarm, RefusesCompositionsThatDoNotFit) {
  DmoeSwarmConfig c = small();
  c.experts_per_runtime = 17;
  EXPECT_THROW(run_dmoe_swarm(c), std::invalid_argument);
  c = small();
  c.runtimes = 2 * 16 * 8 + 2;  // one runtime more per layer than blocks of 2 on a 16 x 16 grid
  EXPECT_THROW(run_dmoe_swarm(c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
