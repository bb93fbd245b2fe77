#include "learn/torch/torch_placement_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace swarmlab::learn {
namespace {

// Four devices of speeds 1, 2, 3, 4 share a batch in proportion to their levels; the step is the
// slowest device's compute plus 1 s of averaging per device taking part beyond the first, and
// device 0 has a 3 s link penalty whenever it takes part. Best: leave device 0 out, the others in
// proportion to speed.
double toy_step(const std::vector<std::uint32_t>& levels) {
  const double speed[] = {1, 2, 3, 4};
  double total = 0;
  for (auto l : levels) total += l;
  if (total == 0) return 100;
  double compute = 0;
  int members = 0;
  for (std::size_t d = 0; d < 4; ++d) {
    if (levels[d] == 0) continue;
    ++members;
    compute = std::max(compute, 36 * levels[d] / total / speed[d]);
  }
  return compute + (members - 1) + (levels[0] > 0 ? 3 : 0);
}

PlacementTask toy_task() {
  PlacementTask t;
  t.name = "toy";
  t.features = {1.0, 0.5, 0.33, 0.25};
  t.devices = 4;
  t.step_seconds = toy_step;
  t.reference_s = toy_step({1, 1, 1, 1});
  return t;
}

PolicyTrainingConfig quick() {
  PolicyTrainingConfig c;
  c.updates = 150;
  c.samples = 16;
  c.levels = 5;
  c.hidden = 32;
  c.learning_rate = 1e-2;
  return c;
}

TEST(PlacementPolicy, LearnsToLeaveTheCostlyDeviceOutAndBalanceTheRest) {
  const auto r = train_placement_policy({toy_task()}, quick());
  ASSERT_EQ(r.curve.size(), 150u);
  ASSERT_EQ(r.greedy_levels.size(), 1u);
  EXPECT_EQ(r.greedy_levels[0][0], 0u) << "device 0 costs 3 s whenever it takes part";
  // The optimum: devices 1-3 with levels 2, 3, 4 (their speeds): 4 s of compute + 2 s. Everyone
  // equal takes 9.6 s.
  EXPECT_LT(r.curve.back().greedy_step_s[0], 1.15 * 6.0);
  EXPECT_LT(r.curve.back().mean_step_s[0], r.curve.front().mean_step_s[0]);
  EXPECT_GT(r.parameters, 0u);
}

TEST(PlacementPolicy, IsAFunctionOfItsConfiguration) {
  auto c = quick();
  c.updates = 20;
  const auto a = train_placement_policy({toy_task()}, c);
  const auto b = train_placement_policy({toy_task()}, c);
  ASSERT_EQ(a.curve.size(), b.curve.size());
  for (std::size_t i = 0; i < a.curve.size(); ++i) EXPECT_EQ(a.curve[i].mean_step_s, b.curve[i].mean_step_s);
  EXPECT_EQ(a.greedy_levels, b.greedy_levels);
}

TEST(PlacementPolicy, RejectsTasksOfDifferentShapes) {
  auto other = toy_task();
  other.devices = 3;
  EXPECT_THROW(train_placement_policy({toy_task(), other}, quick()), std::invalid_argument);
  other = toy_task();
  other.features.push_back(0);
  EXPECT_THROW(train_placement_policy({toy_task(), other}, quick()), std::invalid_argument);
  EXPECT_THROW(train_placement_policy({}, quick()), std::invalid_argument);
  auto c = quick();
  c.levels = 1;
  EXPECT_THROW(train_placement_policy({toy_task()}, c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::learn
