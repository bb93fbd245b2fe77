// Averaging runs over the simulated network: failures, Moshpit groups, churn, determinism.
#include "sim/experiments/averaging_experiment.h"

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "scenarios/scenario_loader.h"

namespace swarmlab::sim {
namespace {

scenarios::Scenario scenario(const std::string& extra_peer_fields, const std::string& averaging, int peers = 16) {
  return scenarios::parse_scenario(R"({
    "name": "t", "seed": 7,
    "workload": {"model": "toy", "parameters": 64000, "wire_precision": "fp32", "target_batch": 64},
    "peers": [{"name": "gpu", "count": )" + std::to_string(peers) +
                                       R"(, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 2)" +
                                       extra_peer_fields + R"(}],
    "averaging": )" + averaging + "}",
                                   "test.json");
}

TEST(AveragingExperiment, InjectedCrashAfter40PercentIsReportedAndSurvivorsFinish) {
  const auto sc = scenario("", R"({"strategy": "ar", "rounds": 2, "part_bytes": 4096, "sender_timeout_s": 5})");
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;
  cfg.rounds = 2;
  cfg.failures.push_back({5, 0, 0.4, -1, SimWorld::Departure::Crash, true});
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 2u);
  EXPECT_EQ(r.rounds[0].participants, 16u);
  EXPECT_EQ(r.rounds[0].failures, 1u);
  EXPECT_EQ(r.rounds[0].incomplete, 0u);
  EXPECT_LT(r.rounds[0].min_fraction_averaged, 1.0);   // the dead reducer's span stayed local
  EXPECT_GE(r.rounds[0].min_fraction_averaged, 14.0 / 16.0);
  // The victim rejoins for the next round, which completes in full.
  EXPECT_EQ(r.rounds[1].participants, 16u);
  EXPECT_EQ(r.rounds[1].failures, 0u);
  EXPECT_DOUBLE_EQ(r.rounds[1].min_fraction_averaged, 1.0);
}

TEST(AveragingExperiment, PerRoundFailureRateIsDeterministic) {
  const auto sc = scenario(R"(, "failure_rate": 0.1)", R"({"strategy": "ar", "rounds": 12, "part_bytes": 8192,
                            "sender_timeout_s": 3, "reducer_timeout_s": 6})");
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;
  cfg.rounds = 12;
  const AveragingRunResult a = run_averaging(sc, cfg), b = run_averaging(sc, cfg);
  std::size_t failures = 0;
  ASSERT_EQ(a.rounds.size(), 12u);
  for (std::size_t i = 0; i < a.rounds.size(); ++i) {
    failures += a.rounds[i].failures;
    EXPECT_EQ(a.rounds[i].failures, b.rounds[i].failures);
    EXPECT_EQ(a.rounds[i].duration_s, b.rounds[i].duration_s);
  }
  // 16 peers × 12 rounds × p = 0.1: about 19 failures expected; far from 0 and from all.
  EXPECT_GT(failures, 5u);
  EXPECT_LT(failures, 40u);
}

TEST(AveragingExperiment, MoshpitGroupsAverageExactlyWithinEachGroup) {
  // 16 peers in groups of 4: a 4 × 4 grid, four groups per round, each averaging exactly.
  const auto sc = scenario("", R"({"strategy": "ours", "rounds": 2, "group_size": 4, "part_bytes": 4096})");
  AveragingRunConfig cfg;
  cfg.rounds = 2;
  cfg.carry_values = true;
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 2u);
  for (const auto& round : r.rounds) {
    EXPECT_EQ(round.groups, 4u);
    EXPECT_EQ(round.participants, 16u);
    EXPECT_LT(round.max_abs_error, 1e-5);
    EXPECT_DOUBLE_EQ(round.min_fraction_averaged, 1.0);
  }
  // A group of 4 moves far less than a butterfly over 16: each round is faster.
  AveragingRunConfig all = cfg;
  const auto everyone = scenario("", R"({"strategy": "ours", "rounds": 2, "part_bytes": 4096})");
  EXPECT_LT(r.mean_round_s, run_averaging(everyone, all).mean_round_s);
}

TEST(AveragingExperiment, PeersThatLeaveAreLeftOutOfLaterRounds) {
  // Two peers leave at 0.05 s: rounds that start after that have 14 participants.
  const auto sc = scenarios::parse_scenario(R"({
    "name": "t", "seed": 1,
    "workload": {"model": "toy", "parameters": 64000, "wire_precision": "fp32", "target_batch": 64},
    "peers": [{"name": "stay", "count": 14, "compute_sps": 10, "bandwidth_bps": 1e8},
              {"name": "go", "count": 2, "compute_sps": 10, "bandwidth_bps": 1e8, "leave_s": 0.05}],
    "averaging": {"strategy": "ar", "rounds": 6}})",
                                            "t.json");
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;
  cfg.rounds = 6;
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 6u);
  EXPECT_EQ(r.rounds.front().participants, 16u);
  EXPECT_EQ(r.rounds.back().participants, 14u);
}

// Matchmaking over the DHT after a member died for good: the survivors leave it out of the group
// they expect (their rounds dropped it; its progress record has not expired), and a leader whose
// group holds everyone it expects begins at once. Before, no group could be full again and every
// later round waited out the leader's 5 s declaration (the live swarm saw the same, issue 18).
TEST(AveragingExperiment, APeerThatDiedForGoodDoesNotHoldUpLaterDhtRounds) {
  const auto sc = scenario("", R"({"strategy": "ar", "rounds": 6, "part_bytes": 65536})", 4);
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;
  cfg.rounds = 6;
  cfg.coordination = scenarios::Coordination::Dht;
  cfg.failures.push_back({2, 1, 0.3, -1, SimWorld::Departure::Crash, false});
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 6u);
  EXPECT_EQ(r.rounds[1].failures, 1u);
  for (std::size_t k = 2; k < r.rounds.size(); ++k) {
    EXPECT_EQ(r.rounds[k].participants, 3u) << "round " << k;
    // A healthy round follows the last within about 0.6 s here (a progress read at the shortest
    // period, or none); waiting out the declaration took 5 s.
    EXPECT_LT(r.rounds[k].started_s - r.rounds[k - 1].started_s, 1.0) << "round " << k;
  }
}

TEST(AveragingExperiment, BandwidthTraceChangesLinksDuringTheRun) {
  // Two peers all-reduce 8 MB (fp32) over 100 Mb/s links; from the start of round 2 one of them
  // has a quarter of its bandwidth, so that round and the next take about four times as long.
  auto sc = scenarios::parse_scenario(R"({
    "name": "t", "seed": 1,
    "workload": {"model": "toy", "parameters": 2000000, "wire_precision": "fp32", "target_batch": 64},
    "peers": [{"name": "a", "compute_sps": 10, "bandwidth_bps": 1e8}, {"name": "b", "compute_sps": 10, "bandwidth_bps": 1e8}],
    "averaging": {"strategy": "ar", "rounds": 4}})",
                                      "t.json");
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;
  cfg.rounds = 4;
  const double before = run_averaging(sc, cfg).rounds[0].duration_s;
  const AveragingRunResult first = run_averaging(sc, cfg);
  sc.bandwidth.events.push_back({"b", 2 * first.rounds[0].duration_s + 1e-6, 2.5e7, 2.5e7});
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 4u);
  EXPECT_DOUBLE_EQ(r.rounds[0].duration_s, before);
  EXPECT_DOUBLE_EQ(r.rounds[1].duration_s, before);
  EXPECT_NEAR(r.rounds[2].duration_s / before, 4.0, 0.4);
  EXPECT_NEAR(r.rounds[3].duration_s / before, 4.0, 0.4);
}

}  // namespace
}  // namespace swarmlab::sim

namespace swarmlab::sim {
namespace {

TEST(AveragingExperiment, ScenarioFailureSectionKillsThePeerMidRound) {
  const auto sc = scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/faults/butterfly-16-crash.json");
  ASSERT_EQ(sc.failures.size(), 1u);
  AveragingRunConfig cfg;
  cfg.strategy = sc.averaging.strategy;
  cfg.rounds = 2;
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 2u);
  EXPECT_EQ(r.rounds[0].failures, 1u);
  EXPECT_EQ(r.rounds[0].incomplete, 0u);
  EXPECT_NEAR(r.rounds[0].min_fraction_averaged, 15.0 / 16.0, 1.0 / 16.0);
  EXPECT_LT(r.rounds[0].duration_s, 60.0);  // well inside the timeouts: the crash was noticed
  EXPECT_EQ(r.rounds[1].failures, 0u);
}

TEST(AveragingExperiment, MalformedFailureEntriesAreRejectedWithTheirPath) {
  try {
    scenarios::parse_scenario(R"({"name": "t", "workload": {"model": "m", "parameters": 10, "target_batch": 1},
      "peers": [{"name": "a", "compute_sps": 1, "bandwidth_bps": 1e6}],
      "failures": [{"peer": "a", "after_fraction": 0.5, "at_s": 3}]})",
                              "f.json");
    FAIL() << "accepted both after_fraction and at_s";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("f.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("failures[0]"), std::string::npos);
  }
}

TEST(AveragingExperiment, MoshpitChurnScenarioRunsWithGroupsAndFailures) {
  const auto sc = scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/faults/moshpit-churn.json");
  AveragingRunConfig cfg;
  cfg.strategy = sc.averaging.strategy;
  cfg.rounds = 6;
  const AveragingRunResult r = run_averaging(sc, cfg);
  ASSERT_EQ(r.rounds.size(), 6u);
  std::size_t failures = 0;
  for (const auto& round : r.rounds) {
    EXPECT_GE(round.groups, 14u);  // 64 peers in groups of 4, less the failed ones' empty groups
    failures += round.failures;
  }
  EXPECT_GT(failures, 0u);
}

}  // namespace
}  // namespace swarmlab::sim
