// The order a sweep hands its runs out (sweep/runner.h dispatch_sequence): costliest first by the
// events the simulator is expected to take (sweep/run.h expected_events); and the budget each run
// is checked against before it starts (execute_run).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sweep/plan.h"
#include "sweep/run.h"
#include "sweep/runner.h"
#include "sweep/spec_loader.h"
#include "sweep_test_util.h"

namespace swarmlab::sweep {
namespace {

using testing::kSource;

SweepSpec dispatch_spec(const std::string& experiment, const std::string& axes) {
  const std::string text = R"({"name": "t", "base": "../../../scenarios/sweeps/volunteers.json", "experiment": )" +
                           experiment + R"(, "axes": )" + axes + "}";
  return parse_sweep_spec(text, kSource + "/tests/sweep/specs/inline.json");
}

std::vector<std::size_t> all_runs(const SweepPlan& plan) {
  std::vector<std::size_t> all;
  for (const auto& r : plan.runs) all.push_back(r.index);
  return all;
}

// Runs 0-3: 2 and 64 home peers (6 and 68 in all), each with AR and the planner.
const std::string kTwoSizes = R"([{"name": "home", "set": "count", "group": "home", "values": [2, 64]},
                               {"name": "strategy", "set": "strategy", "values": ["ar", "ours"], "crossed": true}])";

TEST(SweepDispatch, LargerRunsAreExpectedToCostMoreAndGoFirst) {
  for (const std::string experiment : {R"({"run": "averaging", "rounds": 3})", R"({"run": "training", "duration_s": "6h"})"}) {
    SCOPED_TRACE(experiment);
    const SweepSpec spec = dispatch_spec(experiment, kTwoSizes);
    const SweepPlan plan = make_plan(spec);
    ASSERT_EQ(plan.runs.size(), 4u);
    // Events grow with the peers for each strategy (for training, less than in proportion: 68 peers
    // take fewer steps than 6 in the same hours).
    for (std::size_t small : {0u, 1u}) {
      EXPECT_GT(expected_events(spec, plan.runs[small]), 0);
      EXPECT_GT(expected_events(spec, plan.runs[small + 2]), 1.2 * expected_events(spec, plan.runs[small]));
    }
    const std::vector<std::size_t> order = dispatch_sequence(spec, plan, all_runs(plan), 2);
    ASSERT_EQ(order.size(), 4u);
    EXPECT_GE(order[0], 2u);  // a 68-peer run first
    for (std::size_t k = 1; k < order.size(); ++k)
      EXPECT_GE(expected_events(spec, plan.runs[order[k - 1]]), expected_events(spec, plan.runs[order[k]]));
    // Only the pending runs are handed out.
    EXPECT_EQ(dispatch_sequence(spec, plan, {0, 2}, 2), (std::vector<std::size_t>{2, 0}));
  }
}

// A run whose scenario cannot be built fails at once: it is expected to cost nothing and goes last.
TEST(SweepDispatch, RunsThatCannotBeBuiltGoLast) {
  const SweepSpec spec = load_sweep_spec(kSource + "/tests/sweep/specs/failing.json");
  const SweepPlan plan = make_plan(spec);
  ASSERT_EQ(plan.runs.size(), 2u);
  EXPECT_EQ(expected_events(spec, plan.runs[0]), 0);  // no datacenter peer, every home peer behind NAT
  EXPECT_GT(expected_events(spec, plan.runs[1]), 0);
  EXPECT_EQ(dispatch_sequence(spec, plan, all_runs(plan), 1), (std::vector<std::size_t>{1, 0}));
}

// A run estimated past the budget is not run: it is a failed result naming the estimate and the
// flags, as swarmlab sim and train refuse such a run, and the other runs go on.
TEST(SweepBudget, RunsPastTheBudgetFailWithTheEstimateAndTheOthersRun) {
  const SweepSpec spec = dispatch_spec(R"({"run": "averaging", "rounds": 3})", kTwoSizes);
  const SweepPlan plan = make_plan(spec);
  ASSERT_EQ(plan.runs.size(), 4u);
  sim::RunBudget budget;
  // Between the 6-peer and the 68-peer runs' estimates (both planner runs).
  budget.max_events = 2 * expected_events(spec, plan.runs[1]);
  ASSERT_LT(budget.max_events, expected_events(spec, plan.runs[3]));
  const RunResult small = execute_run(spec, plan.runs[1], budget);
  EXPECT_EQ(small.status, Status::Ok) << small.error;
  EXPECT_FALSE(small.metrics.empty());
  const RunResult large = execute_run(spec, plan.runs[3], budget);
  EXPECT_EQ(large.status, Status::Error);
  EXPECT_TRUE(large.metrics.empty());
  EXPECT_EQ(large.peers, 68u);
  for (const char* part : {"run 3", "estimated at", "68 peers", "--max-events"})
    EXPECT_NE(large.error.find(part), std::string::npos) << part << " in: " << large.error;
  EXPECT_EQ(execute_run(spec, plan.runs[3], sim::RunBudget{}).status, Status::Ok);
}

}  // namespace
}  // namespace swarmlab::sweep
