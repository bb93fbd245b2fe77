// NAT traversal in the simulator (docs/trust.md §4): the NAT'd peers of a collaboration aggregate
// only when relays or hole punches connect them, relayed bytes really cross the relays' links, a
// relayed collaboration trains as one (auth on too), and the comparison is deterministic.
#include "sim/experiments/reachability_experiment.h"

#include <gtest/gtest.h>

#include "core/input_error.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"
#include "sim/scenario/swarm.h"

namespace swarmlab::sim {
namespace {

// 2 public peers on slow links, 5 NAT'd notebooks on fast ones: only the public peers aggregate
// in client mode alone, and they limit averaging.
scenarios::Scenario composition(const std::string& nat_traversal, const std::string& extra = "") {
  return scenarios::parse_scenario(R"({
    "name": "nat-training", "seed": 3,
    "workload": {"model": "toy", "parameters": 2000000, "wire_precision": "fp16", "target_batch": 800},
    "peers": [{"name": "lab", "count": 2, "compute_sps": 10, "bandwidth_bps": 2e7, "latency_ms": 5},
              {"name": "nb", "count": 5, "compute_sps": 10, "download_bps": 2e8, "upload_bps": 1e8, "latency_ms": 5,
               "reachability": "client"}],
    "averaging": {"strategy": "ours"},
    "training": {"micro_batch": 8, "duration_s": 1800, "metrics_interval_s": 300})" +
                                   nat_traversal + extra + "}",
                                   "nat-training.json");
}

TEST(ReachabilityExperiment, HolePunchingWithRelaysLetsNatdPeersAggregateAndSpeedsTrainingUp) {
  const scenarios::Scenario sc = composition(R"(, "nat_traversal": {"relays": "public", "cone_share": 0.5})");
  const ReachabilityResult r = run_reachability(sc);
  ASSERT_EQ(r.variants.size(), 4u);
  EXPECT_EQ(r.clients, 5u);
  EXPECT_EQ(r.relays, 2u);
  const ReachabilityVariant &alone = r.variants[0], &relays = r.variants[1], &punching = r.variants[2], &both = r.variants[3];
  EXPECT_EQ(alone.client_share, 0.0);
  EXPECT_EQ(alone.training.relayed_bytes, 0u);
  EXPECT_GT(alone.training.steps, 10u);
  // Relaying through the public peers costs them more than aggregating the span themselves, so
  // the planner keeps the clients out; never slower than client mode alone.
  EXPECT_GE(relays.training.steps_per_hour, alone.training.steps_per_hour);
  EXPECT_GE(punching.training.steps_per_hour, alone.training.steps_per_hour);
  EXPECT_GT(both.client_share, 0.3);
  EXPECT_GT(both.training.relayed_bytes, 0u);
  EXPECT_GT(both.training.steps_per_hour, 1.1 * alone.training.steps_per_hour);
  EXPECT_LT(both.planned_round_s, alone.planned_round_s);
  for (const auto& v : r.variants) {
    EXPECT_TRUE(v.training.ledger.balanced()) << v.name;
    EXPECT_EQ(v.training.state_downloads, 0u) << v.name;
  }
  // Deterministic: the same scenario and seed give the same runs.
  const ReachabilityResult again = run_reachability(sc);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(again.variants[i].training.step_times, r.variants[i].training.step_times);
    EXPECT_EQ(again.variants[i].training.relayed_bytes, r.variants[i].training.relayed_bytes);
  }
}

TEST(ReachabilityExperiment, ACollaborationWithoutClientPeersIsRejected) {
  const scenarios::Scenario sc = scenarios::parse_scenario(R"({
    "name": "public", "workload": {"model": "toy", "parameters": 1000, "target_batch": 8},
    "peers": [{"name": "p", "count": 2, "compute_sps": 10, "bandwidth_bps": 1e7}]})", "public.json");
  EXPECT_THROW(run_reachability(sc), std::invalid_argument);
}

TEST(RelayedAveraging, RelayedRoundsAverageExactlyAndChargeTheRelay) {
  // Every pair of NAT'd peers relayed (symmetric NATs), values carried and checked.
  scenarios::Scenario sc = composition(R"(, "nat_traversal": {"relays": ["lab-0"], "cone_share": 0})");
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;  // equal shares: the clients must aggregate
  cfg.rounds = 2;
  cfg.carry_values = true;
  const AveragingRunResult r = run_averaging(sc, cfg);
  for (const auto& round : r.rounds) {
    EXPECT_EQ(round.min_fraction_averaged, 1.0);
    EXPECT_LT(round.max_abs_error, 2e-3);  // fp16 on the wire
  }
  // lab-0 forwarded every client pair's parts and returns: it sent far more than lab-1.
  EXPECT_GT(r.bytes_sent[0], 3 * r.bytes_sent[1]);
}

TEST(RelayedAveraging, WithoutRelaysOrPunchedHolesNatdPeersAggregateNothing) {
  // Hole punching only, every NAT symmetric: the clients cannot reach each other, so they do not
  // aggregate; equal shares go to the public peers alone.
  const scenarios::Scenario sc = composition(R"(, "nat_traversal": {"hole_punching": true, "cone_share": 0})");
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;
  cfg.rounds = 1;
  cfg.carry_values = true;
  const AveragingRunResult r = run_averaging(sc, cfg);
  EXPECT_EQ(r.rounds.at(0).min_fraction_averaged, 1.0);
  for (std::size_t i = 2; i < 7; ++i) EXPECT_EQ(r.roles.fractions[i], 0.0);
}

TEST(RelayedAveraging, TrainsWithAuthenticationOnEndToEnd) {
  const scenarios::Scenario sc =
      composition(R"(, "nat_traversal": {"relays": "public", "hole_punching": true, "cone_share": 0.5})", R"(, "auth": {})");
  const TrainingRunResult r = run_training(sc);
  EXPECT_TRUE(r.authenticated);
  EXPECT_GT(r.steps, 10u);
  EXPECT_GT(r.relayed_bytes, 0u);
  EXPECT_TRUE(r.ledger.balanced());
}

}  // namespace
}  // namespace swarmlab::sim
