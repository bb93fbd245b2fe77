// The throughput experiment (docs/learning-at-home.md §8) on a small model: the analytic baselines
// hold, asynchronous trainers keep their throughput under delay, model parallelism does not.
#include "sim/experiments/dmoe_throughput.h"

#include <gtest/gtest.h>

namespace swarmlab::sim {
namespace {

DmoeThroughputConfig small() {
  DmoeThroughputConfig c;
  c.blocks = 8;
  c.gpus = 2;
  c.trainers = 64;
  c.warmup_s = 30;
  c.measure_s = 300;
  c.mean_delays_s = {0, 0.2};
  return c;
}

TEST(DmoeThroughput, BlockCostsFollowFromTheirShapes) {
  const BlockCost ffn = block_cost(DmoeBlock::FeedForward);
  EXPECT_DOUBLE_EQ(ffn.forward_flops, 2.0 * 2048 * (1024.0 * 4096 + 4096.0 * 4096 + 4096.0 * 1024));
  EXPECT_EQ(ffn.rows, 2048u);
  EXPECT_DOUBLE_EQ(ffn.samples_per_batch, 2048);
  const BlockCost tr = block_cost(DmoeBlock::Transformer);
  EXPECT_DOUBLE_EQ(tr.forward_flops, 2.0 * 2048 * 12 * 1024.0 * 1024 + 4.0 * 4 * 512 * 512 * 1024);
  EXPECT_EQ(tr.rows, 2048u);
  EXPECT_DOUBLE_EQ(tr.samples_per_batch, 4);
}

TEST(DmoeThroughput, OneBatchAtATimeWithoutDelayRunsAtTheSumOfItsBlocks) {
  const DmoeThroughputConfig c = small();
  const double forward_s = block_cost(c.block).forward_flops / c.gpu_flops;
  const double expected = 2048 / (c.blocks * (1 + c.backward_cost) * forward_s);
  EXPECT_NEAR(run_dmoe_chains(c, 1, 0) / expected, 1.0, 0.01);
}

TEST(DmoeThroughput, AsynchronousTrainersKeepTheirThroughputAndModelParallelismDoesNot) {
  const DmoeThroughputResult r = run_dmoe_throughput(small());
  ASSERT_EQ(r.points.size(), 2u);
  EXPECT_GT(r.dmoe_retained, 0.85);
  EXPECT_LT(r.model_parallel_retained, 0.1);
  for (const auto& p : r.points) EXPECT_LE(p.dmoe, r.pipelined_upper_bound * 1.01) << p.mean_delay_s;
  // Without delay one batch at a time keeps one GPU of two busy; with 200 ms pauses, almost none.
  EXPECT_GT(r.points[0].dmoe, 1.5 * r.points[0].model_parallel);
  EXPECT_GT(r.points[1].dmoe, 20 * r.points[1].model_parallel);
}

TEST(DmoeThroughput, TheSameSeedGivesTheSameCurves) {
  const DmoeThroughputResult a = run_dmoe_throughput(small()), b = run_dmoe_throughput(small());
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    EXPECT_EQ(a.points[i].dmoe, b.points[i].dmoe);
    EXPECT_EQ(a.points[i].model_parallel, b.points[i].model_parallel);
  }
}

TEST(DmoeThroughput, RefusesBlocksThatDoNotSplitOverTheGpus) {
  DmoeThroughputConfig c = small();
  c.blocks = 9;
  EXPECT_THROW(run_dmoe_throughput(c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
