// The allowlist authentication in the simulator (sim/binding/sim_auth.h): the simulator's envelope
// signatures give Ed25519's verdicts, and a collaboration on the layer trains as one without it,
// a little slower by the charged CPU time and bytes, deterministically.
#include <gtest/gtest.h>

#include "core/input_error.h"
#include "scenarios/scenario_loader.h"
#include "sim/binding/sim_auth.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::sim {
namespace {

using namespace core::auth;

KeyPair key(std::uint8_t n) {
  KeySeed s{};
  s.fill(n);
  return keypair_from_seed(s);
}

TEST(KeyedHashSignatures, OnlyTheKeyHolderSignsAndAnyChangeFails) {
  KeyedHashSignatures scheme;
  const KeyPair a = key(1), b = key(2), stranger = key(3);
  scheme.add(a);
  scheme.add(b);
  const std::vector<std::uint8_t> m = {1, 2, 3, 4};
  const Signature s = scheme.sign(a, m);
  EXPECT_TRUE(scheme.verify(a.public_key, m, s));
  EXPECT_FALSE(scheme.verify(b.public_key, m, s));          // another key
  const std::vector<std::uint8_t> other = {1, 2, 3};
  EXPECT_FALSE(scheme.verify(a.public_key, other, s));  // another message
  Signature flipped = s;
  flipped[63] ^= 1;
  EXPECT_FALSE(scheme.verify(a.public_key, m, flipped));
  EXPECT_FALSE(scheme.verify(stranger.public_key, m, scheme.sign(stranger, m)));  // not in the directory
  EXPECT_NE(scheme.sign(b, m), s);
}

scenarios::Scenario collaboration(const std::string& auth) {
  return scenarios::parse_scenario(R"({
    "name": "auth-training", "seed": 5,
    "workload": {"model": "toy", "parameters": 200000, "wire_precision": "fp16", "target_batch": 400},
    "peers": [{"name": "p", "count": 5, "compute_sps": 10, "bandwidth_bps": 1e7, "latency_ms": 5},
              {"name": "late", "compute_sps": 10, "bandwidth_bps": 1e7, "latency_ms": 5, "join_s": 300}],
    "averaging": {"strategy": "ours"},
    "training": {"coordination": "dht", "micro_batch": 4, "duration_s": 900, "metrics_interval_s": 60})" +
                                   auth + R"(
  })", "auth-training.json");
}

TEST(SimAuth, ACollaborationTrainsOnTheLayerPayingItsBytesAndCpu) {
  const TrainingRunResult off = run_training(collaboration(""));
  const TrainingRunResult on = run_training(collaboration(R"(, "auth": {})"));
  EXPECT_FALSE(off.authenticated);
  EXPECT_TRUE(on.authenticated);
  ASSERT_GT(off.steps, 40u);
  // Every peer takes part as before (a rejected message would stall matchmaking or a round) and
  // the late peer downloads the state through the layer.
  EXPECT_NEAR(static_cast<double>(on.steps), static_cast<double>(off.steps), 0.1 * static_cast<double>(off.steps));
  EXPECT_TRUE(on.ledger.balanced());
  for (const auto& p : on.peers)
    if (p.name == "late") EXPECT_GE(p.state_downloads, 1u);
  // Envelopes are real bytes: every message is larger.
  std::uint64_t sent_off = 0, sent_on = 0;
  for (const auto& p : off.peers) sent_off += p.bytes_sent;
  for (const auto& p : on.peers) sent_on += p.bytes_sent;
  EXPECT_GT(sent_on, sent_off);
  // The CPU time is charged: rounds take longer.
  EXPECT_GT(on.mean_round_s, off.mean_round_s);
}

TEST(SimAuth, MoreChargedCpuTimeMeansSlowerRoundsAndFewerSteps) {
  // A thousand times the measured cost per byte makes a round's 0.4 MB take visibly longer.
  const TrainingRunResult measured = run_training(collaboration(R"(, "auth": {})"));
  const TrainingRunResult costly = run_training(collaboration(R"(, "auth": {"sign_s_per_byte": 1e-6, "verify_s_per_byte": 1e-6})"));
  EXPECT_GT(costly.mean_round_s, measured.mean_round_s + 0.2);
  EXPECT_LT(costly.steps, measured.steps);
}

TEST(SimAuth, SameScenarioAndSeedGiveIdenticalResults) {
  const scenarios::Scenario sc = collaboration(R"(, "auth": {})");
  const TrainingRunResult a = run_training(sc), b = run_training(sc);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.mean_round_s, b.mean_round_s);
  EXPECT_EQ(a.ledger.computed, b.ledger.computed);
  ASSERT_EQ(a.peers.size(), b.peers.size());
  for (std::size_t i = 0; i < a.peers.size(); ++i) {
    EXPECT_EQ(a.peers[i].bytes_sent, b.peers[i].bytes_sent);
    EXPECT_EQ(a.peers[i].averaging_s, b.peers[i].averaging_s);
  }
}

TEST(SimAuth, ScenarioCostsAreChecked) {
  try {
    (void)collaboration(R"(, "auth": {"sign_s": -1})");
    FAIL() << "accepted a negative cost";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("auth.sign_s"), std::string::npos) << e.what();
  }
  try {
    (void)collaboration(R"(, "auth": {"sing_s": 1e-5})");
    FAIL() << "accepted an unknown field";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sing_s"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace swarmlab::sim
