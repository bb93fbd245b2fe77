// Student's t quantiles and the confidence interval of a mean over few seeds.
#include <gtest/gtest.h>

#include <cmath>

#include "sweep/stats.h"

namespace swarmlab::sweep {
namespace {

TEST(Stats, StudentTQuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.3027, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 10), 2.2281, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.95996, 1e-4);
  EXPECT_NEAR(student_t_quantile(0.025, 2), -4.3027, 1e-4);
  EXPECT_NEAR(student_t_cdf(0, 5), 0.5, 1e-12);
}

TEST(Stats, MeanCiUsesTWithNMinusOneDegrees) {
  const MeanCi m = mean_ci({1, 2, 3});
  EXPECT_EQ(m.n, 3u);
  EXPECT_DOUBLE_EQ(m.mean, 2);
  const double half = 4.302653 * 1.0 / std::sqrt(3.0);  // s = 1
  EXPECT_NEAR(m.low, 2 - half, 1e-5);
  EXPECT_NEAR(m.high, 2 + half, 1e-5);
  const MeanCi one = mean_ci({5});
  EXPECT_DOUBLE_EQ(one.mean, 5);
  EXPECT_TRUE(std::isnan(one.low) && std::isnan(one.high));
  const MeanCi same = mean_ci({0.5, 0.5, 0.5});
  EXPECT_DOUBLE_EQ(same.low, 0.5);
  EXPECT_DOUBLE_EQ(same.high, 0.5);
}

}  // namespace
}  // namespace swarmlab::sweep
