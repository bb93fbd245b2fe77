// Live training to a target: six peers on loopback (scenarios/live/fashion-mnist-6.json) train the
// CNN on Fashion-MNIST to 85% test accuracy, consistently, with balanced ledgers. Minutes on 2 cores.
#include <gtest/gtest.h>

#include <cstdio>

#include "exec/launcher.h"
#include "live_swarm.h"

namespace swarmlab::exec {
namespace {

TEST(LiveTrainingSlow, SixPeersReach85PercentTestAccuracy) {
  testing::TempDir dir;
  TrainLaunch t;
  t.steps = 400;
  t.evaluate_every = 25;
  t.eval_samples = 0;
  t.checkpoint_every = 100;
  const LaunchResult r =
      testing::launch_training(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/live/fashion-mnist-6.json", dir.path, t, 1200);
  ASSERT_TRUE(r.training.has_value());
  EXPECT_TRUE(r.ok) << "see " << dir.path;
  const TrainingSummary& s = *r.training;
  EXPECT_TRUE(s.consistent);
  for (const auto& p : s.peers) EXPECT_TRUE(p.samples.balanced) << "peer " << p.peer;
  std::optional<std::uint64_t> reached;
  double reached_s = 0;
  for (const auto& x : s.steps)
    if (!reached && x.test_accuracy && *x.test_accuracy >= 0.85) {
      reached = x.step;
      reached_s = x.time_s;
    }
  ASSERT_TRUE(s.final_test_accuracy.has_value());
  EXPECT_GE(*s.final_test_accuracy, 0.85);
  std::printf("final accuracy %.4f after %llu steps; 85%% first at step %llu, %.1f s\n", *s.final_test_accuracy,
              static_cast<unsigned long long>(s.last_step), static_cast<unsigned long long>(reached.value_or(0)), reached_s);
}

}  // namespace
}  // namespace swarmlab::exec
