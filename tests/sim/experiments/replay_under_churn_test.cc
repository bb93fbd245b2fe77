// Round replay (sim/binding/round_replay.h) against the same runs simulated in full, where peers
// join, leave and download state (docs/interpretations.md §23).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "core/rng.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::sim {
namespace {

// One scenario with round replay (the default) and simulated in full.
std::pair<TrainingRunResult, TrainingRunResult> replayed_and_in_full(const scenarios::Scenario& sc) {
  TrainingRunConfig cfg;
  TrainingRunResult replayed = run_training(sc, cfg);
  cfg.replay_rounds = false;
  return {std::move(replayed), run_training(sc, cfg)};
}

// Round replay (sim/binding/round_replay.h) records a simulated round only if nothing else loaded
// its members' links. Here a state download is under way (the joiner's, 60 s on) when the crasher
// leaves, so the first rounds of the four that remain run beside it at a provider's shared uplink.
// Before, only a download that *began* during a round spoiled its recording: those slower rounds
// were recorded, and replayed for every round of the same four once the joiner had left too
// (76 steps against 85 simulated in full, mean round 6.29 s against 5.26 s).
TEST(ReplayUnderChurn, RoundsBesideADownloadAreNotReplayedAfterIt) {
  const scenarios::Scenario sc = scenarios::parse_scenario(R"({
    "name": "replay-beside-download", "seed": 3,
    "workload": {"model": "toy", "parameters": 15000000, "wire_precision": "fp16", "target_batch": 80},
    "peers": [
      {"name": "core", "count": 4, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5},
      {"name": "crasher", "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5, "leave_s": 65},
      {"name": "joiner", "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 5, "join_s": 60, "leave_s": 200}
    ],
    "averaging": {"strategy": "ours"},
    "training": {"micro_batch": 2, "duration_s": 600, "state_bytes_per_parameter": 12, "metrics_interval_s": 60}
  })", "replay-beside-download.json");
  const auto [replayed, simulated] = replayed_and_in_full(sc);
  ASSERT_GE(replayed.state_downloads, 1u);
  ASSERT_GT(replayed.rounds_replayed, replayed.rounds / 2);
  EXPECT_EQ(replayed.steps, simulated.steps);
  EXPECT_NEAR(replayed.mean_round_s, simulated.mean_round_s, 0.01 * simulated.mean_round_s);
}

// A member that leaves mid-round ends the round as the protocol decides (here the parameter
// server leaves, and the workers finish at once with their own values), which a replay cannot
// know. Departures the scenario schedules are known in advance, so a round that one would
// interrupt is simulated instead. Before, the workers finished when the recording said, 17 s late
// (15 steps against 16 simulated in full).
TEST(ReplayUnderChurn, RoundsThatAScheduledDepartureInterruptsAreSimulated) {
  const scenarios::Scenario sc = scenarios::parse_scenario(R"({
    "name": "replay-departure", "seed": 2,
    "workload": {"model": "toy", "parameters": 15000000, "wire_precision": "fp16", "target_batch": 40},
    "peers": [
      {"name": "gpu", "count": 3, "compute_sps": 10, "bandwidth_bps": 2e7, "latency_ms": 5},
      {"name": "server", "compute_sps": 0, "bandwidth_bps": 2e8, "latency_ms": 5, "leave_s": 150}
    ],
    "averaging": {"strategy": "ps"},
    "training": {"micro_batch": 2, "duration_s": 400, "state_bytes_per_parameter": 12, "metrics_interval_s": 60}
  })", "replay-departure.json");
  const auto [replayed, simulated] = replayed_and_in_full(sc);
  ASSERT_GT(replayed.rounds_replayed, replayed.rounds / 2);
  EXPECT_EQ(replayed.steps, simulated.steps);
  EXPECT_NEAR(replayed.mean_round_s, simulated.mean_round_s, 0.001 * simulated.mean_round_s);
}

// A peer that joins loads the state from a member, at a moment the replay cannot foresee: the
// round in flight when it arrives, and every round until it starts its first, are simulated. Before,
// those rounds were replayed, and neither their bytes nor the download's met the other's: 40 steps
// replayed against 98 simulated in full here (random_churn_scenario(160) below, which this is).
TEST(ReplayUnderChurn, RoundsWhileANewcomerMayLoadTheStateAreSimulated) {
  const scenarios::Scenario sc = scenarios::parse_scenario(R"({
    "name": "replay-newcomer", "seed": 160,
    "workload": {"model": "toy", "parameters": 5000000, "wire_precision": "fp16", "target_batch": 40},
    "peers": [
      {"name": "p0", "compute_sps": 10, "latency_ms": 25, "download_bps": 2e7, "upload_bps": 1e7},
      {"name": "p1", "compute_sps": 10, "latency_ms": 5, "bandwidth_bps": 5e7},
      {"name": "p2", "compute_sps": 0, "latency_ms": 5, "bandwidth_bps": 1e8, "join_s": 55.468464},
      {"name": "p3", "compute_sps": 10, "latency_ms": 45, "download_bps": 5e7, "upload_bps": 2.5e7, "join_s": 296.173964}
    ],
    "averaging": {"strategy": "ours"},
    "training": {"micro_batch": 2, "duration_s": 600, "state_bytes_per_parameter": 12, "metrics_interval_s": 60}
  })", "replay-newcomer.json");
  const auto [replayed, simulated] = replayed_and_in_full(sc);
  ASSERT_GE(simulated.state_downloads, 2u);
  ASSERT_GT(replayed.rounds_replayed, 0u);
  EXPECT_EQ(replayed.steps, simulated.steps);
  EXPECT_EQ(replayed.state_downloads, simulated.state_downloads);
  EXPECT_NEAR(replayed.mean_round_s, simulated.mean_round_s, 1e-6 * simulated.mean_round_s);
}

// A small random collaboration of 3–8 peers for 10 minutes: GPUs and CPU-only peers, symmetric
// and asymmetric links, joins and departures at random, butterfly or one-server averaging.
scenarios::Scenario random_churn_scenario(std::uint64_t seed, const char* coordination = "oracle") {
  core::Rng rng(seed, 23);
  const double links[] = {2e7, 5e7, 1e8, 2e8};
  const int computes[] = {0, 5, 10, 20};
  const int n = 3 + static_cast<int>(rng.below(6));
  std::string peers;
  for (int i = 0; i < n; ++i) {
    const double link = links[rng.below(4)];
    std::string p = "{\"name\": \"p" + std::to_string(i) + "\", \"compute_sps\": " +
                    std::to_string(i < 2 ? 10 : computes[rng.below(4)]) + ", \"latency_ms\": " +
                    std::to_string(5 + 20 * rng.below(3));
    if (rng.bernoulli(0.3)) {
      p += ", \"download_bps\": " + std::to_string(link) + ", \"upload_bps\": " +
           std::to_string(link * (rng.bernoulli(0.5) ? 0.2 : 0.5));
    } else {
      p += ", \"bandwidth_bps\": " + std::to_string(link);
    }
    double join = 0;
    if (i >= 2 && rng.bernoulli(0.4)) p += ", \"join_s\": " + std::to_string(join = 10 + 290 * rng.uniform());
    if (i >= 2 && rng.bernoulli(0.4)) p += ", \"leave_s\": " + std::to_string(join + 30 + 270 * rng.uniform());
    peers += (i ? ", " : "") + p + "}";
  }
  const int parameters[] = {1000000, 5000000, 15000000};
  const int batches[] = {40, 80, 200};
  const char* strategies[] = {"ours", "ar", "ps"};
  const std::string text =
      "{\"name\": \"random-churn\", \"seed\": " + std::to_string(seed) +
          ", \"workload\": {\"model\": \"toy\", \"parameters\": " + std::to_string(parameters[rng.below(3)]) +
          ", \"wire_precision\": \"fp16\", \"target_batch\": " + std::to_string(batches[rng.below(3)]) +
          "}, \"peers\": [" + peers + "], \"averaging\": {\"strategy\": \"" + strategies[rng.below(3)] +
          "\"}, \"training\": {\"micro_batch\": 2, \"duration_s\": 600, \"state_bytes_per_parameter\": 12, "
          "\"metrics_interval_s\": 60, \"coordination\": \"" + coordination + "\"}}";
  return scenarios::parse_scenario(text, "random-churn.json");
}

// A newcomer loads the state from members at moments no recording knows, so rounds in flight when
// a peer arrives, and rounds begun before a newcomer's first, are simulated (docs/interpretations.md
// §23). Before, 45 of these 300 scenarios ended on other step counts than simulated in full, one
// 59% apart. Now one does (seed 295, 128 against 133 steps): it replays only its first four rounds,
// before anyone joins, and it is chaotic (moving one join by a nanosecond moves its full simulation
// between 129 and 133 steps), so replay is held to a few such.
TEST(ReplayUnderChurn, RandomCollaborationsStepAsWhenSimulatedInFull) {
  int same = 0, replayed_rounds = 0, rounds = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const auto [replayed, simulated] = replayed_and_in_full(random_churn_scenario(seed));
    const double steps = static_cast<double>(simulated.steps);
    same += replayed.steps == simulated.steps ? 1 : 0;
    replayed_rounds += static_cast<int>(replayed.rounds_replayed);
    rounds += static_cast<int>(replayed.rounds);
    EXPECT_LE(std::abs(static_cast<double>(replayed.steps) - steps), std::max(1.0, 0.05 * steps)) << seed;
  }
  EXPECT_GE(same, 297);
  EXPECT_GT(replayed_rounds, rounds / 2);  // replay still stands in for most rounds
}

// With DHT coordination members start when their own estimates say the step is due, and a
// replayed member finishes the recorded time after the last one started. A round recorded while a
// member started late (its parts flowed for less of the round) replayed too short wherever the
// members then started together; now only rounds whose members started within 1% of the round's
// length of each other are recorded. Of these 100 scenarios, 56 took the same steps replayed and
// simulated in full before, and 70 do now (docs/interpretations.md §23: the rest is the replay's
// own limits with DHT coordination).
TEST(ReplayUnderChurn, RandomDhtCollaborationsMostlyStepAsWhenSimulatedInFull) {
  int same = 0;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    const auto [replayed, simulated] = replayed_and_in_full(random_churn_scenario(seed, "dht"));
    same += replayed.steps == simulated.steps ? 1 : 0;
  }
  EXPECT_GE(same, 66);
}

}  // namespace
}  // namespace swarmlab::sim
