// DiLoCo (docs/opendiloco.md §1): H local steps, then one averaging of pseudo-gradients and the
// outer step.
#include <gtest/gtest.h>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::sim {
namespace {

// Two workers at 10 samples/s and one at 5; local batch 10.
scenarios::Scenario diloco(int h) {
  return scenarios::parse_scenario(R"({
    "name": "diloco", "seed": 9,
    "workload": {"model": "toy", "parameters": 500000, "wire_precision": "fp16", "target_batch": 30},
    "peers": [
      {"name": "fast", "count": 2, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5},
      {"name": "slow", "compute_sps": 5, "bandwidth_bps": 1e8, "latency_ms": 5}
    ],
    "averaging": {"strategy": "ar"},
    "training": {"mode": "diloco", "local_steps": )" + std::to_string(h) +
                                   R"(, "local_batch": 10, "micro_batch": 10, "duration_s": 4000}
  })", "diloco.json");
}

std::uint64_t total_sent(const TrainingRunResult& r) {
  std::uint64_t s = 0;
  for (const auto& p : r.peers) s += p.bytes_sent;
  return s;
}

TEST(TrainingDiloco, CommunicationFallsByHAndTheFastestWorkerWaitsForTheSlowest) {
  const TrainingRunResult every = run_training(diloco(1));
  const TrainingRunResult h10 = run_training(diloco(10));
  ASSERT_GT(h10.steps, 10u);
  // Bytes per sample trained: one averaging per 10 local steps instead of one per step.
  const double per_sample_1 = static_cast<double>(total_sent(every)) / static_cast<double>(every.ledger.computed);
  const double per_sample_10 = static_cast<double>(total_sent(h10)) / static_cast<double>(h10.ledger.computed);
  EXPECT_NEAR(per_sample_1 / per_sample_10, 10.0, 0.3);
  // By hand: per outer step the slow worker needs 10 x 10 / 5 = 20 s, the fast ones 10 s, so a
  // fast worker waits 10 s per outer step; communication is reported separately.
  const auto& fast = h10.peers[0];
  const double outer_started = static_cast<double>(h10.steps) + (h10.step_times.size() < h10.steps ? 1 : 0);
  EXPECT_NEAR(fast.wait_s / static_cast<double>(h10.steps), 10.0, 10.0 / static_cast<double>(h10.steps) + 1e-6)
      << outer_started;
  EXPECT_NEAR(h10.peers[2].wait_s, 0.0, 1e-9);  // the slowest never waits
  EXPECT_GT(fast.averaging_s, 0.0);
  EXPECT_NEAR(fast.averaging_s / static_cast<double>(h10.steps), h10.mean_round_s, 0.5);
  EXPECT_EQ(h10.local_steps_per_step, 10u);
  EXPECT_TRUE(h10.ledger.balanced());
}

}  // namespace
}  // namespace swarmlab::sim
