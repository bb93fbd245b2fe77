// The order a local pool hands out work items (sweep/dispatch_order.h).
#include <gtest/gtest.h>

#include <vector>

#include "sweep/dispatch_order.h"

namespace swarmlab::sweep {
namespace {

TEST(DispatchOrder, ListMakespanHandsEachItemToTheFirstFreeWorker) {
  const std::vector<double> costs{3, 2, 2, 1};
  EXPECT_DOUBLE_EQ(list_makespan(costs, std::vector<std::size_t>{0, 1, 2, 3}, 2), 4);  // 3+1 | 2+2
  EXPECT_DOUBLE_EQ(list_makespan(costs, std::vector<std::size_t>{3, 2, 1, 0}, 2), 5);  // 1+2 | 2+3
  EXPECT_DOUBLE_EQ(list_makespan(costs, std::vector<std::size_t>{0, 1, 2, 3}, 1), 8);
  EXPECT_DOUBLE_EQ(list_makespan(costs, std::vector<std::size_t>{0, 1, 2, 3}, 8), 3);
}

// The five ALBERT setups' CPU seconds on two workers: costliest first ends at 1.11 s (time-varying,
// then heterogeneous-lb | high-bandwidth, auxiliary, heterogeneous); the best order pairs
// time-varying with auxiliary and ends at 1.04 s.
TEST(DispatchOrder, BeatsCostliestFirstWhereItLeavesAWorkerIdle) {
  const std::vector<double> costs{0.45, 0.26, 0.33, 0.40, 0.60};  // hb, het, het-lb, aux, tv
  const std::vector<std::size_t> lpt{4, 0, 3, 2, 1};
  EXPECT_NEAR(list_makespan(costs, lpt, 2), 1.11, 1e-9);
  const std::vector<std::size_t> order = dispatch_order(costs, 2);
  EXPECT_NEAR(list_makespan(costs, order, 2), 1.04, 1e-9);
  // No order does better: the two lanes' best split of 2.04 s.
  std::vector<std::size_t> any{0, 1, 2, 3, 4};
  do EXPECT_GE(list_makespan(costs, any, 2), 1.04 - 1e-9);
  while (std::next_permutation(any.begin(), any.end()));
}

TEST(DispatchOrder, IsCostliestFirstWhereThatIsBestOrTheItemsAreMany) {
  EXPECT_EQ(dispatch_order(std::vector<double>{1, 3, 2}, 1), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(dispatch_order(std::vector<double>{1, 3, 2}, 4), (std::vector<std::size_t>{1, 2, 0}));
  EXPECT_EQ(dispatch_order(std::vector<double>{2, 2, 2, 2}, 2), (std::vector<std::size_t>{0, 1, 2, 3}));
  std::vector<double> many(kExhaustiveDispatchItems + 1);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i % 4);
  const std::vector<std::size_t> order = dispatch_order(many, 3);
  for (std::size_t k = 1; k < order.size(); ++k) EXPECT_GE(many[order[k - 1]], many[order[k]]);
}

}  // namespace
}  // namespace swarmlab::sweep
