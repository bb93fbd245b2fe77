// Learning@home live at the shipped size (docs/learning-at-home.md §10): scenarios/dmoe/fashion-mnist.json,
// 8 expert runtimes (4 DMoE layers, 2 runtimes each) and 4 asynchronous trainers for 2 minutes.
#include <gtest/gtest.h>

#include <cstdio>

#include "exec/dmoe_launch.h"
#include "live_swarm.h"

namespace swarmlab::exec {
namespace {

TEST(DmoeLiveSlow, FourTrainersAgainstEightRuntimesReachEightyPercent) {
  testing::TempDir dir;
  DmoeLaunchOptions o;
  o.scenario = scenarios::load_dmoe_live_file(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/dmoe/fashion-mnist.json");
  o.out_dir = dir.path;
  o.executable = std::string(SWARMLAB_BINARY_DIR) + "/swarmlab";
  const DmoeLaunchResult r = launch_dmoe(o);
  ASSERT_TRUE(r.ok) << "see " << dir.path;
  ASSERT_TRUE(r.final_test_accuracy.has_value());
  EXPECT_GE(*r.final_test_accuracy, 0.80) << "see " << dir.path;
  EXPECT_EQ(r.dropped, 0u);
  std::printf("%llu batches, %.1f samples/s, final test accuracy %.4f\n", static_cast<unsigned long long>(r.batches),
              r.samples_per_s, *r.final_test_accuracy);
}

}  // namespace
}  // namespace swarmlab::exec
