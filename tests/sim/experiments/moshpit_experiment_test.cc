#include "sim/experiments/moshpit_experiment.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace swarmlab::sim {
namespace {

MoshpitConfig config(std::uint64_t peers, std::uint64_t m, double p, std::uint64_t rounds, std::uint64_t seed = 1) {
  MoshpitConfig c;
  c.peers = peers;
  c.group_size = m;
  c.failure_rate = p;
  c.rounds = rounds;
  c.seed = seed;
  return c;
}

TEST(MoshpitExperimentTest, FullGridWithoutFailuresIsExactAfterOneRoundPerAxis) {
  const auto r = run_moshpit_experiment(config(512, 8, 0.0, 6));
  ASSERT_EQ(r.per_round.size(), 6u);
  EXPECT_EQ(r.moshpit_to_target, 3u);
  EXPECT_EQ(r.allreduce_restart_to_target, 1u);
  EXPECT_GT(r.per_round[1].moshpit, 1e-3);
  EXPECT_LT(r.per_round[2].moshpit, 1e-13);
  // Each round along a new axis divides the squared spread by about m.
  EXPECT_NEAR(r.per_round[0].moshpit, std::sqrt(1.0 / 8), 0.03);
  EXPECT_NEAR(r.per_round[1].moshpit, std::sqrt(1.0 / 64), 0.01);
}

TEST(MoshpitExperimentTest, ExactAverageAfterDRoundsForEveryPowerOfM) {
  for (auto [m, d] : {std::pair{2, 9}, {3, 5}, {4, 4}, {5, 3}, {10, 2}, {16, 2}, {7, 1}}) {
    std::uint64_t n = 1;
    for (int i = 0; i < d; ++i) n *= m;
    auto c = config(n, m, 0.0, d + 1, 3);
    c.dim = 16;
    const auto r = run_moshpit_experiment(c);
    if (d > 1) {
      EXPECT_GT(r.per_round[d - 2].moshpit, 1e-3) << m << "^" << d;
    }
    EXPECT_LT(r.per_round[d - 1].moshpit, 1e-13) << m << "^" << d;
    EXPECT_EQ(r.moshpit_to_target, static_cast<std::uint64_t>(d)) << m << "^" << d;
  }
}

TEST(MoshpitExperimentTest, IncompleteGridStillConvergesToTheMean) {
  auto c = config(513, 8, 0.0, 40);
  c.target = 1e-6;
  const auto r = run_moshpit_experiment(c);
  EXPECT_GT(r.per_round[3].moshpit, 1e-9);  // d = 4 rounds are not exact with partial groups
  ASSERT_TRUE(r.moshpit_to_target);
  for (std::size_t t = 1; t < r.per_round.size(); ++t) EXPECT_LE(r.per_round[t].moshpit, r.per_round[t - 1].moshpit + 1e-15);
}

TEST(MoshpitExperimentTest, WithFailuresMoshpitConvergesGeometricallyWhileAllReduceStalls) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    auto c = config(512, 8, 0.01, 30, seed);
    c.target = 1e-4;
    const auto r = run_moshpit_experiment(c);
    ASSERT_TRUE(r.moshpit_to_target) << seed;
    EXPECT_LE(*r.moshpit_to_target, 12u) << seed;
    // Geometric: every full pass over the three axes cuts the error by at least 10×.
    for (std::size_t t = 3; t + 3 < 15; ++t) EXPECT_LT(r.per_round[t + 3].moshpit, 0.1 * r.per_round[t].moshpit) << seed << " " << t;
    // All-reduce needs a round where all 512 survive (0.99^512 ≈ 0.6%); Moshpit gets there first.
    if (r.allreduce_restart_to_target) {
      EXPECT_GT(*r.allreduce_restart_to_target, *r.moshpit_to_target) << seed;
    }
    ASSERT_TRUE(r.random_groups_to_target) << seed;
  }
}

TEST(MoshpitExperimentTest, AllReduceCompletesOnlyInARoundWithoutFailures) {
  // 4 peers failing half the time: 1/16 of the rounds have everyone, and the first one completes.
  const auto r = run_moshpit_experiment(config(4, 2, 0.5, 100, 9));
  ASSERT_TRUE(r.allreduce_restart_to_target);
  for (const auto& e : r.per_round)
    EXPECT_EQ(e.allreduce_restart, e.round < *r.allreduce_restart_to_target ? 1.0 : 0.0);
}

TEST(MoshpitExperimentTest, AveragingKeepsFailedPeersAndTheGlobalMeanForLivePeers) {
  core::moshpit::Partition part;
  part.members = {0, 1, 2, 3};
  part.close_group();
  part.members.push_back(4);
  part.close_group();
  std::vector<double> values = {1, 10, 2, 20, 3, 30, 100, 1000, 7, 70};  // 5 peers × dim 2
  const std::vector<std::uint8_t> alive = {1, 1, 0, 1, 1};
  std::vector<double> scratch(2);
  average_groups<double>(values, 2, part, alive, scratch);
  const std::vector<double> want = {(1 + 2 + 100) / 3.0, (10 + 20 + 1000) / 3.0, (1 + 2 + 100) / 3.0, (10 + 20 + 1000) / 3.0,
                                    3, 30, (1 + 2 + 100) / 3.0, (10 + 20 + 1000) / 3.0, 7, 70};
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_DOUBLE_EQ(values[i], want[i]) << i;
  std::vector<float> f = {1, 3, 5, 7, 9};
  std::vector<float> fs(1);
  average_groups<float>(f, 1, part, std::vector<std::uint8_t>(5, 1), fs);
  EXPECT_EQ(f, (std::vector<float>{4, 4, 4, 4, 9}));
}

TEST(MoshpitExperimentTest, SameSeedSameBytesOtherSeedOtherNumbers) {
  const auto c = config(200, 6, 0.05, 12, 42);
  const auto a = run_moshpit_experiment(c), b = run_moshpit_experiment(c);
  EXPECT_EQ(moshpit_json(a), moshpit_json(b));
  EXPECT_EQ(moshpit_text(a), moshpit_text(b));
  auto other = c;
  other.seed = 43;
  EXPECT_NE(moshpit_json(run_moshpit_experiment(other)), moshpit_json(a));
}

TEST(MoshpitExperimentTest, JsonHasTheDocumentedShape) {
  auto c = config(512, 8, 0.01, 5, 1);
  const auto j = nlohmann::json::parse(moshpit_json(run_moshpit_experiment(c)));
  ASSERT_TRUE(j.contains("rounds_to_target"));
  const auto& r = j["rounds_to_target"];
  EXPECT_EQ(r.size(), 3u);
  for (const char* key : {"moshpit", "allreduce_restart", "random_groups"}) {
    ASSERT_TRUE(r.contains(key)) << key;
    EXPECT_TRUE(r[key].is_null() || r[key].is_number_unsigned()) << key;
  }
  EXPECT_TRUE(r["moshpit"].is_null());  // 1e-9 is out of reach in 5 rounds with failures
  ASSERT_EQ(j["per_round"].size(), 5u);
  for (std::size_t t = 0; t < 5; ++t) {
    const auto& e = j["per_round"][t];
    EXPECT_EQ(e.size(), 4u);
    EXPECT_EQ(e["round"], t + 1);
    for (const char* key : {"moshpit_mse", "allreduce_restart_mse", "random_groups_mse"}) EXPECT_TRUE(e[key].is_number_float()) << key;
  }
  const auto text = moshpit_text(run_moshpit_experiment(c));
  EXPECT_NE(text.find("moshpit never"), std::string::npos);
}

TEST(MoshpitExperimentTest, RejectsBadConfigurations) {
  EXPECT_THROW(run_moshpit_experiment(config(1, 2, 0.0, 1)), std::invalid_argument);
  EXPECT_THROW(run_moshpit_experiment(config(10, 1, 0.0, 1)), std::invalid_argument);
  EXPECT_THROW(run_moshpit_experiment(config(10, 2, 1.0, 1)), std::invalid_argument);
  EXPECT_THROW(run_moshpit_experiment(config(10, 2, -0.5, 1)), std::invalid_argument);
  EXPECT_THROW(run_moshpit_experiment(config(10, 2, 0.0, 0)), std::invalid_argument);
  auto c = config(10, 2, 0.0, 1);
  c.dim = 0;
  EXPECT_THROW(run_moshpit_experiment(c), std::invalid_argument);
  c.dim = 4;
  c.target = 0;
  EXPECT_THROW(run_moshpit_experiment(c), std::invalid_argument);
  c = config(1 << 20, 2, 0.0, 1);
  c.dim = 1 << 10;
  EXPECT_THROW(run_moshpit_experiment(c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
