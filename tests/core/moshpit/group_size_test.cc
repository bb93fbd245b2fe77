#include "core/moshpit/group_size.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace swarmlab::core::moshpit {
namespace {

double binomial(int n, int k) {
  double r = 1;
  for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

// E[max of G iid Geometric(q)] by inclusion–exclusion: Σ_k (−1)^{k+1} C(G,k) / (1 − (1−q)^k).
double max_geometric(int groups, double q) {
  double e = 0;
  for (int k = 1; k <= groups; ++k)
    e += (k % 2 ? 1 : -1) * binomial(groups, k) / -std::expm1(k * std::log1p(-q));
  return e;
}

TEST(GroupSizeTest, OneGroupTakesOneOverItsSuccessProbability) {
  const GroupCount one[] = {{8, 1}};
  EXPECT_NEAR(expected_axis_rounds(one, 0.1), 1 / std::pow(0.9, 8), 1e-9);
  EXPECT_DOUBLE_EQ(expected_axis_rounds(one, 0.0), 1.0);
  const GroupCount alone[] = {{1, 50}};  // groups of one exchange nothing and never fail
  EXPECT_DOUBLE_EQ(expected_axis_rounds(alone, 0.5), 1.0);
}

TEST(GroupSizeTest, ManyGroupsWaitForTheSlowest) {
  for (double p : {0.001, 0.01, 0.1, 0.3}) {
    for (int groups : {2, 5, 12}) {
      const GroupCount g[] = {{4, static_cast<std::uint64_t>(groups)}, {1, 3}};
      const double q = std::pow(1 - p, 4);
      EXPECT_NEAR(expected_axis_rounds(g, p), max_geometric(groups, q), 1e-9 * max_geometric(groups, q))
          << p << " " << groups;
    }
  }
}

TEST(GroupSizeTest, SlowGroupsUseTheSmoothApproximationAccurately) {
  // Success probabilities around 1e-3 and below: the first just above the exact-sum threshold, the
  // others in the integral regime. Both agree with inclusion–exclusion to ~1e-6 relative.
  for (double q : {2e-3, 9e-4, 1e-4, 1e-6}) {
    for (int groups : {1, 3, 10}) {
      const double p = 1 - std::pow(q, 1.0 / 3);
      const GroupCount g[] = {{3, static_cast<std::uint64_t>(groups)}};
      const double want = max_geometric(groups, std::pow(1 - p, 3));
      EXPECT_NEAR(expected_axis_rounds(g, p), want, 1e-6 * want) << q << " " << groups;
    }
  }
}

TEST(GroupSizeTest, ExpectedRoundsSumsTheAxes) {
  // 512 = 8^3: three axes of 64 groups of 8.
  const double p = 0.01;
  const GroupCount axis[] = {{8, 64}};
  EXPECT_NEAR(expected_rounds(512, 8, p), 3 * expected_axis_rounds(axis, p), 1e-12);
  EXPECT_DOUBLE_EQ(expected_rounds(512, 8, 0.0), 3.0);
  EXPECT_DOUBLE_EQ(expected_rounds(512, 512, 0.0), 1.0);
}

// (a) The paper's regime: few peers, rare failures → one group of everyone.
TEST(GroupSizeTest, FewPeersRareFailuresAverageInOneGroup) {
  const auto c = choose_group_size(16, 0.001);
  EXPECT_EQ(c.best.group_size, 16u);
  EXPECT_NEAR(c.best.expected_rounds, 1 / std::pow(0.999, 16), 1e-9);
  ASSERT_TRUE(c.runner_up);
  EXPECT_EQ(c.runner_up->group_size, 4u);
  EXPECT_GT(c.runner_up->expected_rounds, 2.0);
  EXPECT_EQ(choose_group_size(16, 0.0).best.group_size, 16u);
  EXPECT_EQ(choose_group_size(16, 0.0).best.expected_rounds, 1.0);
}

// (b) Thousands of peers: the group shrinks as failures grow.
TEST(GroupSizeTest, LargeSwarmsShrinkGroupsAsFailuresGrow) {
  for (std::uint64_t n : {1000, 4096, 10000}) {
    const auto rare = choose_group_size(n, 1e-5).best.group_size;
    const auto some = choose_group_size(n, 3e-3).best.group_size;
    const auto many = choose_group_size(n, 0.03).best.group_size;
    EXPECT_GT(rare, some) << n;
    EXPECT_GT(some, many) << n;
    EXPECT_GT(many, 2u) << n;
  }
  EXPECT_EQ(choose_group_size(4096, 1e-3).best.group_size, 64u);
  EXPECT_EQ(choose_group_size(4096, 1e-2).best.group_size, 16u);
}

// (c) Frequent failures: pairwise averaging.
TEST(GroupSizeTest, FrequentFailuresFallToPairs) {
  // (n = 3 at p = 0.5 is a tie: one group of 3 and two rounds of pairs both expect 8 rounds.)
  for (std::uint64_t n : {4, 16, 100, 4096, 100000})
    for (double p : {0.5, 0.8, 0.99, 0.999999}) EXPECT_EQ(choose_group_size(n, p).best.group_size, 2u) << n << " " << p;
}

TEST(GroupSizeTest, GroupSizeNeverGrowsAndRoundsNeverFallAsFailuresGrow) {
  for (std::uint64_t n : {2, 3, 10, 16, 64, 100, 512, 1000, 4096, 10000, 1000000}) {
    std::uint64_t prev_m = n + 1;
    double prev_e = 0;
    for (double p = 0.0; p < 0.95; p = p < 1e-6 ? 1e-6 : p * 1.15) {
      const auto c = choose_group_size(n, p);
      EXPECT_LE(c.best.group_size, prev_m) << "n=" << n << " p=" << p;
      EXPECT_GE(c.best.expected_rounds, prev_e) << "n=" << n << " p=" << p;
      prev_m = c.best.group_size;
      prev_e = c.best.expected_rounds;
    }
  }
}

TEST(GroupSizeTest, AgreesWithBruteForceOverEveryGroupSize) {
  for (std::uint64_t n : {2, 3, 5, 9, 16, 27, 50, 100}) {
    for (double p : {0.0, 0.0005, 0.005, 0.02, 0.1, 0.3, 0.6}) {
      const auto c = choose_group_size(n, p);
      double best = 1e300;
      for (std::uint64_t m = 2; m <= n; ++m) best = std::min(best, expected_rounds(n, m, p));
      EXPECT_DOUBLE_EQ(c.best.expected_rounds, best) << n << " " << p;
      EXPECT_EQ(grid_shape(n, c.best.group_size).side, c.best.group_size) << "reported as the grid's side";
      if (n == 2) {
        EXPECT_FALSE(c.runner_up);
      } else {
        ASSERT_TRUE(c.runner_up);
        EXPECT_NE(c.runner_up->group_size, c.best.group_size);
        EXPECT_GE(c.runner_up->expected_rounds, c.best.expected_rounds);
        double second = 1e300;
        for (std::uint64_t m = 2; m <= n; ++m)
          if (grid_shape(n, m).side != c.best.group_size) second = std::min(second, expected_rounds(n, m, p));
        EXPECT_DOUBLE_EQ(c.runner_up->expected_rounds, second) << n << " " << p;
      }
    }
  }
}

TEST(GroupSizeTest, RejectsBadInput) {
  EXPECT_THROW(choose_group_size(1, 0.1), std::invalid_argument);
  EXPECT_THROW(choose_group_size(10, 1.0), std::invalid_argument);
  EXPECT_THROW(choose_group_size(10, -0.1), std::invalid_argument);
  EXPECT_THROW(choose_group_size(10, std::nan("")), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::moshpit
