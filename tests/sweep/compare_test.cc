// Comparisons per composition: paired changes over seeds, 95% intervals, shares, worst case.
#include <gtest/gtest.h>

#include <cmath>

#include "sweep/compare.h"
#include "sweep/result_table.h"

namespace swarmlab::sweep {
namespace {

// A table of round times: two compositions (home = 4, 8) x strategies (ar, ours) x 3 seeds.
ResultTable table() {
  ResultTable t;
  t.dir = "mem";
  t.name = "t";
  t.experiment = "averaging";
  t.axes = {"home", "strategy"};
  t.numeric_axes = {"home"};
  t.metrics = nlohmann::json::array({{{"name", "mean_round_s"}, {"higher_is_better", false}, {"meaning", ""}}});
  t.primary_metric = "mean_round_s";
  t.header = {"run", "composition", "seed", "home", "strategy", "status", "mean_round_s"};
  const double ar[2][3] = {{100, 110, 90}, {50, 50, 50}};
  const double ours[2][3] = {{80, 88, 81}, {55, 60, 50}};  // -20%, -20%, -10%; +10%, +20%, 0%
  int run = 0;
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 2; ++s)
      for (int seed = 0; seed < 3; ++seed, ++run)
        t.rows.push_back({std::to_string(run), std::to_string(2 * c + s), std::to_string(seed + 1), c ? "8" : "4",
                          s ? "ours" : "ar", "ok", std::to_string(s ? ours[c][seed] : ar[c][seed])});
  return t;
}

TEST(Compare, WithinOneSweepPairsSeedsPerComposition) {
  const Comparison c = compare_within(table(), {});
  EXPECT_EQ(c.metric, "mean_round_s");
  EXPECT_FALSE(c.higher_is_better);
  EXPECT_EQ(c.baseline, "strategy=ar");
  EXPECT_EQ(c.candidate, "strategy=ours");
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].values, std::vector<std::string>{"4"});
  EXPECT_EQ(c.rows[0].pairs, 3u);
  const double mean0 = (-0.2 - 0.2 - 0.1) / 3;
  EXPECT_NEAR(c.rows[0].change, mean0, 1e-12);
  const double sd0 = std::sqrt(((0.2 + mean0) * (0.2 + mean0) * 2 + (0.1 + mean0) * (0.1 + mean0)) / 2);
  EXPECT_NEAR(c.rows[0].ci_high - c.rows[0].change, 4.302653 * sd0 / std::sqrt(3.0), 1e-5);
  EXPECT_TRUE(c.rows[0].helps);
  EXPECT_TRUE(c.rows[0].significant);
  EXPECT_NEAR(c.rows[1].change, 0.1, 1e-12);
  EXPECT_FALSE(c.rows[1].helps);
  EXPECT_FALSE(c.rows[1].significant);  // +10% +- 4.30 x 5.8%: the interval holds 0
  EXPECT_DOUBLE_EQ(c.share_helps, 0.5);
  EXPECT_DOUBLE_EQ(c.share_helps_significantly, 0.5);
  EXPECT_DOUBLE_EQ(c.share_hurts_significantly, 0);
  ASSERT_TRUE(c.worst && c.best);
  EXPECT_EQ(*c.worst, 1u);
  EXPECT_EQ(*c.best, 0u);
}

TEST(Compare, TwoSweepsAndFailedRuns) {
  ResultTable a = table(), b = table();
  b.name = "u";
  // b: the same table with the strategies swapped, and one failed run.
  for (auto& row : b.rows) row[4] = row[4] == "ar" ? "ours" : "ar";
  b.rows[0][5] = "error";
  CompareOptions o;
  o.metric = "mean_round_s";
  const Comparison c = compare_sweeps(a, b, o);
  // Compositions are keyed by every shared axis (home, strategy): 4, each with 3 or 2 pairs.
  ASSERT_EQ(c.rows.size(), 4u);
  EXPECT_EQ(c.rows[0].pairs, 3u);  // (4, ar)
  EXPECT_EQ(c.rows[1].pairs, 2u);  // (4, ours): b's seed 1 failed
  o.metric = "nonsense";
  EXPECT_THROW(compare_sweeps(a, b, o), std::invalid_argument);
}

TEST(Compare, RejectsAnAxisThatIsNotThere) {
  CompareOptions o;
  o.axis = "codec";
  EXPECT_THROW(compare_within(table(), o), std::invalid_argument);
  o.axis = "strategy";
  o.candidate = "ps";
  EXPECT_THROW(compare_within(table(), o), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sweep
