// Hydra's halving-doubling as a scenario's averaging strategy ("hd"): the collaborative peer's
// rounds run it instead of the butterfly, in averaging runs and in training.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/input_error.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::sim {
namespace {

using core::averaging::Strategy;

// Twelve peers: eight exchange and four are folded in and served (docs/hydra.md §5).
scenarios::Scenario twelve(const std::string& averaging) {
  return scenarios::parse_scenario(R"({
    "name": "hd", "seed": 11,
    "workload": {"model": "toy", "parameters": 48000, "wire_precision": "fp32", "target_batch": 64},
    "peers": [{"name": "fast", "count": 4, "compute_sps": 10, "bandwidth_bps": 4e8, "latency_ms": 3},
              {"name": "slow", "count": 8, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 3}],
    "averaging": )" + averaging + "}",
                                   "hd.json");
}

TEST(HalvingDoublingStrategy, AveragesExactlyAndDeterministically) {
  const auto sc = twelve(R"({"strategy": "hd", "rounds": 3, "part_bytes": 8192})");
  EXPECT_EQ(sc.averaging.strategy, Strategy::HalvingDoubling);
  AveragingRunConfig cfg;
  cfg.strategy = Strategy::HalvingDoubling;
  cfg.rounds = 3;
  cfg.carry_values = true;
  const AveragingRunResult a = run_averaging(sc, cfg), b = run_averaging(sc, cfg);
  EXPECT_EQ(a.strategy, "HD");
  ASSERT_EQ(a.rounds.size(), 3u);
  for (std::size_t i = 0; i < a.rounds.size(); ++i) {
    EXPECT_EQ(a.rounds[i].participants, 12u);
    EXPECT_DOUBLE_EQ(a.rounds[i].min_fraction_averaged, 1.0);
    EXPECT_LT(a.rounds[i].max_abs_error, 1e-5);
    EXPECT_GT(a.rounds[i].duration_s, 0.0);
    EXPECT_EQ(a.rounds[i].duration_s, b.rounds[i].duration_s);
  }
  EXPECT_EQ(a.bytes_sent, b.bytes_sent);
  // The same bytes as the butterfly, in other places: the 8 of the exchange send 2(1 - 1/8) of the
  // vector each, the 4 extras one vector each way (22 vectors), against 12 × 2(1 - 1/12) = 22.
  AveragingRunConfig ar = cfg;
  ar.strategy = Strategy::AllReduce;
  const AveragingRunResult butterfly = run_averaging(sc, ar);
  double hd_bytes = 0, ar_bytes = 0;
  for (auto x : a.bytes_sent) hd_bytes += static_cast<double>(x);
  for (auto x : butterfly.bytes_sent) ar_bytes += static_cast<double>(x);
  EXPECT_NEAR(hd_bytes / ar_bytes, 1.0, 0.01);
}

TEST(HalvingDoublingStrategy, TheFastestServeTheExtrasWhateverTheListingOrder) {
  // The roles rank the senders by their links, so listing the slow peers first changes nothing;
  // in plan order, four slow partners would take in and serve the extras.
  const auto fast_first = twelve(R"({"strategy": "hd", "rounds": 1, "part_bytes": 8192})");
  auto slow_first = fast_first;
  std::rotate(slow_first.peers.begin(), slow_first.peers.begin() + 4, slow_first.peers.end());
  AveragingRunConfig cfg;
  cfg.strategy = Strategy::HalvingDoubling;
  cfg.rounds = 1;
  EXPECT_NEAR(run_averaging(slow_first, cfg).mean_round_s, run_averaging(fast_first, cfg).mean_round_s, 1e-9);
}

TEST(HalvingDoublingStrategy, ACrashMidRoundLeavesSurvivorsConsistentAndTheNextRoundWhole) {
  const auto sc = twelve(R"({"strategy": "hd", "rounds": 2, "part_bytes": 8192, "sender_timeout_s": 2})");
  AveragingRunConfig cfg;
  cfg.strategy = Strategy::HalvingDoubling;
  cfg.rounds = 2;
  cfg.failures.push_back({2, 0, 0.3, -1, SimWorld::Departure::Crash, true});  // a participant of the exchange
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 2u);
  EXPECT_EQ(r.rounds[0].failures, 1u);
  EXPECT_EQ(r.rounds[0].incomplete, 0u);
  // Its block came back to nobody; the extra it was to serve keeps its own vector (nothing final).
  EXPECT_LT(r.rounds[0].mean_fraction_averaged, 1.0);
  EXPECT_GT(r.rounds[0].mean_fraction_averaged, 0.5);
  EXPECT_EQ(r.rounds[1].participants, 12u);  // back, with its state
  EXPECT_DOUBLE_EQ(r.rounds[1].min_fraction_averaged, 1.0);
}

TEST(HalvingDoublingStrategy, TrainsWithABalancedSampleLedger) {
  const auto sc = scenarios::parse_scenario(R"({
    "name": "hd-train", "seed": 5,
    "workload": {"model": "toy", "parameters": 200000, "wire_precision": "fp16", "target_batch": 200},
    "peers": [{"name": "gpu", "count": 5, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5},
              {"name": "late", "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5, "join_s": 100},
              {"name": "quitter", "compute_sps": 7, "bandwidth_bps": 1e8, "latency_ms": 5, "leave_s": 150.5}],
    "averaging": {"strategy": "hd"},
    "training": {"micro_batch": 3, "duration_s": 400, "state_bytes_per_parameter": 12, "metrics_interval_s": 60}
  })", "hd-train.json");
  TrainingRunConfig cfg;
  const TrainingRunResult r = run_training(sc, cfg);
  ASSERT_GT(r.steps, 10u);
  EXPECT_TRUE(r.ledger.balanced());
  EXPECT_EQ(r.ledger.computed, r.ledger.in_steps + r.ledger.lost + r.ledger.pending);
  for (const auto& p : r.peers) {
    if (!p.training_at_end) continue;
    EXPECT_GE(p.step, r.steps) << p.name;
    EXPECT_LE(p.step, r.steps + 1) << p.name;
  }
}

TEST(HalvingDoublingStrategy, ScenarioRejectsCenteredClipWithHd) {
  try {
    twelve(R"({"strategy": "hd", "centered_clip": {"tau": 1}})");
    FAIL() << "expected an InputError";
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), "hd.json");
    EXPECT_EQ(e.location(), "averaging.centered_clip");
    EXPECT_NE(std::string(e.what()).find("hd"), std::string::npos);
  }
}

}  // namespace
}  // namespace swarmlab::sim
