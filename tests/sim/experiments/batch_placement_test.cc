#include "sim/experiments/batch_placement.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <string>

#include "scenarios/scenario_loader.h"

namespace swarmlab::sim {
namespace {

scenarios::Scenario shipped(const std::string& name) {
  return scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR).append("/scenarios/placement/").append(name).append(".json"));
}

// Three symmetric devices of 10, 20 and 30 samples/s at 100 Mb/s; a small gradient.
scenarios::Scenario three_devices() {
  scenarios::Scenario sc;
  sc.name = "three";
  sc.workload.model = "m";
  sc.workload.parameters = 1'000'000;
  sc.workload.target_batch = 600;
  for (int i = 0; i < 3; ++i) {
    scenarios::PeerSpec p;
    p.name = "d";
    p.name += std::to_string(i);  // appended: GCC 12 warns falsely on "d" + std::to_string(i)
    p.group = p.name;
    p.compute_sps = 10.0 * (i + 1);
    p.download_bps = p.upload_bps = 100e6;
    sc.peers.push_back(p);
  }
  return sc;
}

TEST(BatchSplit, FollowsTheWeightsAndAddsUpToTheBatch) {
  EXPECT_EQ(split_batch(600, std::vector<double>{1, 2, 3}), (std::vector<std::uint64_t>{100, 200, 300}));
  EXPECT_EQ(split_batch(10, std::vector<double>{1, 1, 1}), (std::vector<std::uint64_t>{4, 3, 3}));
  EXPECT_EQ(split_batch(10, std::vector<double>{0, 1, 0}), (std::vector<std::uint64_t>{0, 10, 0}));
  EXPECT_EQ(split_batch(9, std::vector<double>{0, 0, 0}), (std::vector<std::uint64_t>{3, 3, 3}));
  const auto odd = split_batch(1001, std::vector<double>{0.3, 7, 1e-3, 2.2});
  EXPECT_EQ(std::accumulate(odd.begin(), odd.end(), std::uint64_t{0}), 1001u);
}

TEST(StepTimeModel, ComputeWaitsForTheSlowestDeviceAndChargesExtraPasses) {
  auto sc = three_devices();
  sc.peers[2].max_micro_batch = 100;
  PlacementConfig cfg;
  cfg.pass_overhead_s = 0.5;
  const StepTimeModel model(sc, cfg);
  ASSERT_EQ(model.devices(), 3u);
  // 100 / 10, 200 / 20, and 300 / 30 in three passes: 10 + 2 x 0.5.
  EXPECT_DOUBLE_EQ(model.compute_seconds(std::vector<std::uint64_t>{100, 200, 300}), 11.0);
  EXPECT_DOUBLE_EQ(model.compute_seconds(std::vector<std::uint64_t>{0, 600, 0}), 30.0);
  EXPECT_THROW(model.compute_seconds(std::vector<std::uint64_t>{100, 200}), std::invalid_argument);
  EXPECT_THROW(model.compute_seconds(std::vector<std::uint64_t>{100, 200, 200}), std::invalid_argument);
}

TEST(StepTimeModel, AveragesAmongTheDevicesThatComputedOncePerSet) {
  StepTimeModel model(three_devices(), {});
  EXPECT_EQ(model.averaging_seconds(std::vector<std::uint64_t>{0, 600, 0}), 0);  // alone: nothing to exchange
  const double all = model.averaging_seconds(std::vector<std::uint64_t>{100, 200, 300});
  const double two = model.averaging_seconds(std::vector<std::uint64_t>{0, 300, 300});
  EXPECT_GT(all, 0);
  EXPECT_GT(two, 0);
  EXPECT_EQ(model.simulated_rounds(), 2u);
  EXPECT_EQ(model.averaging_seconds(std::vector<std::uint64_t>{200, 200, 200}), all);  // same set: replayed
  EXPECT_EQ(model.simulated_rounds(), 2u);
  // An equal-share butterfly moves 2 (n-1)/n of the gradient through each link: less with two.
  EXPECT_LT(two, all);
}

TEST(StepTimeModel, LeavingSlowUplinksOutBeatsProportionalSharesOnTheShippedComposition) {
  StepTimeModel model(shipped("slow-uplinks"), {});
  ASSERT_EQ(model.devices(), 8u);
  const double proportional = model.step_seconds(proportional_split(model));
  // The two V100s (devices 0 and 1) upload at 10 Mb/s: without them the round is far shorter.
  std::vector<double> without_v100(8, 1.0);
  without_v100[0] = without_v100[1] = 0;
  const double left_out = model.step_seconds(split_batch(model.batch(), without_v100));
  EXPECT_LT(left_out, 0.8 * proportional);
  const auto planner = model.planner_step();
  EXPECT_EQ(std::accumulate(planner.sizes.begin(), planner.sizes.end(), std::uint64_t{0}), model.batch());
  EXPECT_GT(planner.step_s(), 0);
}

TEST(StepTimeModel, IsDeterministic) {
  StepTimeModel a(shipped("two-regions"), {}), b(shipped("two-regions"), {});
  const auto sizes = proportional_split(a);
  EXPECT_EQ(a.step_seconds(sizes), b.step_seconds(sizes));
  EXPECT_EQ(a.planner_step().step_s(), b.planner_step().step_s());
}

TEST(PlacementFeatures, DescribeEachDeviceAndEachPairWithinZeroAndOne) {
  const auto sc = shipped("two-regions");
  const auto f = placement_features(sc, {});
  ASSERT_EQ(f.size(), 4u * 8 + 2u * 8 * 8);
  for (double v : f) {
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 1);
  }
  // The K80s (devices 2, 3) are the slowest per sample; the pair rate across regions is capped.
  EXPECT_EQ(f[2 * 4], 1.0);
  const std::size_t rates = 4 * 8 + 8 * 8;
  EXPECT_LT(f[rates + 0 * 8 + 4], f[rates + 0 * 8 + 1]);
}

TEST(StepTimeModel, RejectsACompositionWithoutDevices) {
  auto sc = three_devices();
  for (auto& p : sc.peers) p.compute_sps = 0;
  EXPECT_THROW(StepTimeModel(sc, {}), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
