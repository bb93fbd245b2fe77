// Joining and leaving during training (docs/dedloc.md §1): late joiners download parameters +
// optimizer state from an up-to-date peer, leavers' samples are counted as lost, and the sample
// accounting balances exactly.
#include <gtest/gtest.h>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::sim {
namespace {

scenarios::Scenario churny() {
  return scenarios::parse_scenario(R"({
    "name": "churn", "seed": 5,
    "workload": {"model": "toy", "parameters": 200000, "wire_precision": "fp16", "target_batch": 200},
    "peers": [
      {"name": "early", "count": 4, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5},
      {"name": "late", "count": 2, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5, "join_s": 120},
      {"name": "quitter", "compute_sps": 7, "bandwidth_bps": 1e8, "latency_ms": 5, "leave_s": 203.3}
    ],
    "averaging": {"strategy": "ours"},
    "training": {"micro_batch": 3, "duration_s": 600, "state_bytes_per_parameter": 12, "metrics_interval_s": 60}
  })", "churn.json");
}

TEST(TrainingChurn, LateJoinersCatchUpAndTheSampleAccountingBalances) {
  TrainingRunConfig cfg;
  cfg.replay_rounds = false;  // every round over the network, joins and leaves included
  const TrainingRunResult r = run_training(churny(), cfg);
  ASSERT_GT(r.steps, 10u);
  // Both late joiners downloaded the state (12 bytes x 200,000 parameters each, at least).
  EXPECT_EQ(r.state_bytes, 2400000u);
  EXPECT_GE(r.state_downloads, 2u);
  for (const auto& p : r.peers)
    if (p.name.rfind("late", 0) == 0) {
      EXPECT_GE(p.state_downloads, 1u) << p.name;
      EXPECT_GE(p.bytes_received, r.state_bytes) << p.name;
      EXPECT_GT(p.sync_s, 0.0) << p.name;
    }
  // Afterwards every active peer is at the global step (or one ahead: done with the round in flight).
  for (const auto& p : r.peers) {
    if (!p.training_at_end) continue;
    EXPECT_GE(p.step, r.steps) << p.name;
    EXPECT_LE(p.step, r.steps + 1) << p.name;
  }
  EXPECT_FALSE(r.peers.back().up_at_end);  // the quitter left
  // Samples computed = in steps + lost + pending, exactly, and pending is what the peers hold.
  EXPECT_TRUE(r.ledger.balanced());
  EXPECT_EQ(r.ledger.computed, r.ledger.in_steps + r.ledger.lost + r.ledger.pending);
  EXPECT_EQ(r.ledger.pending, r.pending_check);
  EXPECT_GT(r.ledger.lost, 0u);
  std::uint64_t per_peer = 0;
  for (const auto& p : r.peers) per_peer += p.samples;
  EXPECT_EQ(per_peer, r.ledger.computed);
}

}  // namespace
}  // namespace swarmlab::sim
