// Experts outliving their runtime (core/dmoe/expert_keeper.h): runtime A hosts an expert and keeps
// its checkpoint in the DHT; runtime B watches it and takes it over when A's announcements lapse.
// DHT peers in the memory world (support/dht_swarm.h), linear experts (dmoe/linear_expert_backend.h).
#include "core/dmoe/expert_keeper.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "core/dmoe/beam_search.h"
#include "core/dmoe/expert_client.h"
#include "dmoe/linear_expert_backend.h"
#include "support/dht_swarm.h"

namespace swarmlab::core::dmoe {
namespace {

using core::testing::LinearExpertBackend;

constexpr std::uint32_t kIn = 4, kOut = 3;
constexpr PeerId kA = 1, kB = 2, kTrainer = 5, kSearcher = 6;
const ExpertGrid kGrid{"ffn", 2, 4};
const ExpertUid kUid{2, 3};
const AnnounceConfig kAnnounce{20.0, 5.0};

// One runtime peer: its experts, their announcements and their keeper.
struct Host {
  Host(testing::DhtSwarm& swarm, PeerId p, std::uint32_t in = kIn)
      : backend(swarm.env(p), in, kOut),
        runtime(swarm.env(p), kGrid, backend),
        announcer(swarm.env(p), *swarm.nodes[p], kGrid, kAnnounce) {
    swarm.muxes[p]->add(ServiceId::Experts, runtime);
  }
  void start(KeeperConfig config, std::vector<ExpertUid> watched, testing::DhtSwarm& swarm, PeerId p) {
    announcer.start([this] { return std::vector<ExpertUid>(runtime.experts().begin(), runtime.experts().end()); });
    keeper = std::make_unique<ExpertKeeper>(swarm.env(p), *swarm.nodes[p], runtime, announcer, config);
    keeper->start(std::move(watched));
  }
  LinearExpertBackend backend;
  ExpertRuntime runtime;
  ExpertAnnouncer announcer;
  std::unique_ptr<ExpertKeeper> keeper;
};

KeeperConfig keeper_config(Seconds checkpoint_period_s) {
  KeeperConfig c;
  c.checkpoint_period_s = checkpoint_period_s;
  c.checkpoint_ttl_s = 600;
  c.watch_period_s = 3;
  return c;
}

Tensor values(std::uint32_t rows, std::uint32_t cols, float seed) {
  Tensor t = Tensor::zeros(rows, cols);
  for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = seed - 0.2f * static_cast<float>(i % 4);
  return t;
}

std::optional<BeamSearchResult> search(testing::DhtSwarm& swarm) {
  std::optional<BeamSearchResult> result;
  beam_search(swarm.env(kSearcher), *swarm.nodes[kSearcher], kGrid, std::vector<std::vector<double>>(2, std::vector<double>(4, 0.0)),
              4, [&](BeamSearchResult r) { result = std::move(r); });
  swarm.run_for(5);
  return result;
}

TEST(ExpertKeeper, TakesOverAnExpertFromItsCheckpointWhenItsRuntimeGoesDown) {
  testing::DhtSwarm swarm(std::vector<double>(8, 100.0));
  ExpertClient trainer(swarm.env(kTrainer), ClientConfig{2.0, 4.0});
  swarm.muxes[kTrainer]->add(ServiceId::Experts, trainer);
  Host a(swarm, kA), b(swarm, kB);
  a.runtime.host(kUid);
  a.start(keeper_config(5), {}, swarm, kA);
  swarm.run_for(1);

  // Train A's expert once, so that its weights are no longer the fresh ones.
  std::optional<ExpertClient::Result> trained;
  trainer.backward(kA, kUid, values(2, kIn, 0.5f), values(2, kOut, 1.0f), kIn,
                   [&](ExpertClient::Result r) { trained = std::move(r); });
  swarm.run_for(1);
  ASSERT_TRUE(trained && trained->output);
  const std::vector<float> trained_w = a.backend.weights(kUid);
  ASSERT_NE(trained_w, LinearExpertBackend::initial_weights(kUid, kIn, kOut));
  swarm.run_for(5);  // a checkpoint is stored
  EXPECT_GE(a.keeper->stats().checkpoints_stored, 1u);

  // B watches the expert; while A announces it, B leaves it alone.
  b.start(keeper_config(5), {kUid}, swarm, kB);
  swarm.run_for(12);
  EXPECT_GE(b.keeper->stats().checks, 3u);
  EXPECT_FALSE(b.runtime.hosts(kUid));
  const auto before = search(swarm);
  ASSERT_TRUE(before && before->experts.size() == 1);
  EXPECT_EQ(before->experts[0].runtime, kA);

  swarm.world->set_down(kA);
  swarm.run_for(kAnnounce.alive_for_s + 2 * 3 + 5);  // the last announcement lapses; B checks, loads, announces
  EXPECT_EQ(b.keeper->stats().taken_over, 1u);
  EXPECT_EQ(b.keeper->stats().restarted_fresh, 0u);
  ASSERT_TRUE(b.runtime.hosts(kUid));
  EXPECT_EQ(b.backend.weights(kUid), trained_w);  // exactly A's checkpointed weights
  const auto after = search(swarm);
  ASSERT_TRUE(after.has_value());
  ASSERT_EQ(after->experts.size(), 1u);
  EXPECT_EQ(after->experts[0].uid, kUid);
  EXPECT_EQ(after->experts[0].runtime, kB);

  // B serves it: a forward gives x·W with A's weights.
  std::optional<ExpertClient::Result> answer;
  const Tensor x = values(1, kIn, 0.25f);
  trainer.forward(kB, kUid, x, kOut, [&](ExpertClient::Result r) { answer = std::move(r); });
  swarm.run_for(1);
  ASSERT_TRUE(answer && answer->output);
  EXPECT_EQ(*answer->output, LinearExpertBackend::matmul(x, trained_w, kOut));
  // It stays with B: no second takeover.
  swarm.run_for(30);
  EXPECT_EQ(b.keeper->stats().taken_over, 1u);
  EXPECT_EQ(b.keeper->stats().restarted_fresh, 0u);
}

TEST(ExpertKeeper, RestartsAnExpertAfreshWithoutACheckpoint) {
  testing::DhtSwarm swarm(std::vector<double>(8, 100.0));
  Host a(swarm, kA), b(swarm, kB);
  a.runtime.host(kUid);
  a.start(keeper_config(1000), {}, swarm, kA);  // never gets to store a checkpoint
  swarm.run_for(2);
  b.start(keeper_config(1000), {kUid}, swarm, kB);
  swarm.run_for(7);
  EXPECT_FALSE(b.runtime.hosts(kUid));
  swarm.world->set_down(kA);
  swarm.run_for(kAnnounce.alive_for_s + 2 * 3 + 5);
  EXPECT_EQ(a.keeper->stats().checkpoints_stored, 0u);
  EXPECT_EQ(b.keeper->stats().taken_over, 0u);
  EXPECT_EQ(b.keeper->stats().restarted_fresh, 1u);
  ASSERT_TRUE(b.runtime.hosts(kUid));
  EXPECT_EQ(b.backend.weights(kUid), LinearExpertBackend::initial_weights(kUid, kIn, kOut));
  const auto found = search(swarm);
  ASSERT_TRUE(found && found->experts.size() == 1);
  EXPECT_EQ(found->experts[0].runtime, kB);
}

TEST(ExpertKeeper, RestartsAfreshWhenTheCheckpointDoesNotFit) {
  testing::DhtSwarm swarm(std::vector<double>(8, 100.0));
  Host a(swarm, kA), b(swarm, kB, kIn + 1);  // B's experts are wider than A's
  a.runtime.host(kUid);
  a.start(keeper_config(2), {}, swarm, kA);
  swarm.run_for(3);
  b.start(keeper_config(2), {kUid}, swarm, kB);
  swarm.run_for(4);
  EXPECT_GE(a.keeper->stats().checkpoints_stored, 2u);
  swarm.world->set_down(kA);
  swarm.run_for(kAnnounce.alive_for_s + 2 * 3 + 5);
  EXPECT_EQ(b.keeper->stats().taken_over, 0u);
  EXPECT_EQ(b.keeper->stats().restarted_fresh, 1u);
  ASSERT_TRUE(b.runtime.hosts(kUid));
  EXPECT_EQ(b.backend.weights(kUid), LinearExpertBackend::initial_weights(kUid, kIn + 1, kOut));
}

TEST(ExpertKeeper, RejectsNonPositivePeriods) {
  testing::DhtSwarm swarm({100, 100});
  Host a(swarm, 1);
  KeeperConfig c = keeper_config(0);
  EXPECT_THROW(ExpertKeeper(swarm.env(1), *swarm.nodes[1], a.runtime, a.announcer, c), std::invalid_argument);
  c = keeper_config(5);
  c.watch_period_s = -1;
  EXPECT_THROW(ExpertKeeper(swarm.env(1), *swarm.nodes[1], a.runtime, a.announcer, c), std::invalid_argument);
  c = keeper_config(5);
  c.checkpoint_ttl_s = 0;
  EXPECT_THROW(ExpertKeeper(swarm.env(1), *swarm.nodes[1], a.runtime, a.announcer, c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::dmoe

namespace swarmlab::core::dmoe {
namespace {

// An expert never seen alive may belong to a runtime that has not joined yet: it is not taken over.
TEST(ExpertKeeper, NeverTakesOverAnExpertItNeverSawAlive) {
  testing::DhtSwarm swarm(std::vector<double>(8, 100.0));
  Host b(swarm, kB);
  b.start(keeper_config(1000), {kUid}, swarm, kB);
  swarm.run_for(kAnnounce.alive_for_s + 10 * 3);
  EXPECT_GE(b.keeper->stats().checks, 10u);
  EXPECT_EQ(b.keeper->stats().misses, 0u);
  EXPECT_FALSE(b.runtime.hosts(kUid));
}

// Checks in a row: a watched expert missing at fewer than lapsed_checks checks stays where it is.
TEST(ExpertKeeper, WaitsForLapsedChecksInARowBeforeTakingOver) {
  testing::DhtSwarm swarm(std::vector<double>(8, 100.0));
  Host a(swarm, kA), b(swarm, kB);
  a.runtime.host(kUid);
  a.start(keeper_config(1000), {}, swarm, kA);
  swarm.run_for(2);
  KeeperConfig c = keeper_config(1000);
  c.lapsed_checks = 4;
  b.start(c, {kUid}, swarm, kB);
  swarm.run_for(7);
  swarm.world->set_down(kA);
  swarm.run_for(kAnnounce.alive_for_s + 2 * 3);  // gone from the DHT, but missed fewer than 4 times
  EXPECT_FALSE(b.runtime.hosts(kUid));
  swarm.run_for(4 * 3);
  EXPECT_TRUE(b.runtime.hosts(kUid));
  EXPECT_EQ(b.keeper->stats().restarted_fresh, 1u);
}

TEST(ExpertKeeper, RefusesWatchedUidsOutsideTheGridAndZeroCounts) {
  testing::DhtSwarm swarm({100, 100});
  Host a(swarm, 1);
  ExpertKeeper keeper(swarm.env(1), *swarm.nodes[1], a.runtime, a.announcer, keeper_config(5));
  EXPECT_THROW(keeper.start({ExpertUid{1}}), std::invalid_argument);        // one coordinate on a 2-d grid
  EXPECT_THROW(keeper.start({ExpertUid{1, 4}}), std::invalid_argument);     // 4 is off a side-4 grid
  KeeperConfig c = keeper_config(5);
  c.lapsed_checks = 0;
  EXPECT_THROW(ExpertKeeper(swarm.env(1), *swarm.nodes[1], a.runtime, a.announcer, c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::dmoe
