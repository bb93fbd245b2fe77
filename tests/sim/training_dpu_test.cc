// DPU on vs off when averaging takes about as long as computing a batch (docs/dedloc.md §1): the
// step rate is about 1/max(compute, averaging) with DPU and 1/(compute + averaging) without.
#include <gtest/gtest.h>

#include "scenarios/scenario_loader.h"
#include "sim/training_experiment.h"

namespace swarmlab::sim {
namespace {

// 4 peers at 10 samples/s, batch 400: 10 s of compute per step. 1 M fp32 parameters: each peer
// uploads 1.5 x 4 MB per butterfly round; at 6.5 Mb/s x 0.735 goodput that is about 10 s.
scenarios::Scenario balanced(bool dpu) {
  return scenarios::parse_scenario(R"({
    "name": "dpu", "seed": 3,
    "workload": {"model": "toy", "parameters": 1000000, "wire_precision": "fp32", "target_batch": 400},
    "peers": [{"name": "gpu", "count": 4, "compute_sps": 10, "bandwidth_bps": 6.5e6, "latency_ms": 5}],
    "averaging": {"strategy": "ar"},
    "training": {"dpu": )" + std::string(dpu ? "true" : "false") +
                                   R"(, "micro_batch": 5, "duration_s": 2000, "metrics_interval_s": 100}
  })", "dpu.json");
}

TEST(TrainingDpu, RateIsOneOverMaxWithDpuAndOneOverSumWithout) {
  const TrainingRunResult off = run_training(balanced(false));
  const TrainingRunResult on = run_training(balanced(true));
  const double compute_s = 400.0 / 40.0;
  const double avg_off = off.mean_round_s, avg_on = on.mean_round_s;
  ASSERT_GT(avg_off, 0.7 * compute_s);  // the setup really balances the two
  ASSERT_LT(avg_off, 1.3 * compute_s);
  const double period_off = 2000.0 / static_cast<double>(off.steps);
  const double period_on = 2000.0 / static_cast<double>(on.steps);
  EXPECT_NEAR(period_off, compute_s + avg_off, 0.08 * (compute_s + avg_off));
  EXPECT_NEAR(period_on, std::max(compute_s, avg_on), 0.08 * std::max(compute_s, avg_on));
  EXPECT_GT(static_cast<double>(on.steps), 1.6 * static_cast<double>(off.steps));
  // With DPU the devices hardly wait; without, they idle through every round.
  EXPECT_GT(on.mean_utilisation, 0.85);
  EXPECT_LT(off.mean_utilisation, 0.65);
  for (const auto* r : {&off, &on}) {
    EXPECT_TRUE(r->ledger.balanced());
    EXPECT_EQ(r->ledger.pending, r->pending_check);
    EXPECT_EQ(r->ledger.lost, 0u);
  }
}

TEST(TrainingDpu, ReplayedRoundsGiveTheSameScheduleAsSimulatedOnes) {
  TrainingRunConfig exact;
  exact.replay_identical_rounds = false;
  exact.duration_s = 500;
  TrainingRunConfig fast = exact;
  fast.replay_identical_rounds = true;
  const auto a = run_training(balanced(false), exact);
  const auto b = run_training(balanced(false), fast);
  EXPECT_EQ(a.rounds_replayed, 0u);
  EXPECT_GT(b.rounds_replayed, 0u);
  ASSERT_EQ(a.step_times.size(), b.step_times.size());
  for (std::size_t i = 0; i < a.step_times.size(); ++i) EXPECT_NEAR(a.step_times[i], b.step_times[i], 1e-6);
  EXPECT_EQ(a.peers[0].bytes_sent, b.peers[0].bytes_sent);
}

}  // namespace
}  // namespace swarmlab::sim
