// The butterfly protocol driven through the core's memory world (tests/core/support/memory_world.h).
#include "core/averaging/butterfly_round.h"

#include <gtest/gtest.h>

#include <memory>
#include <numeric>

#include "swarm_fixture.h"

namespace swarmlab::core::averaging {
namespace {

using testing::plan_for;
using testing::Swarm;
using testing::uniform_links;

std::vector<std::vector<float>> random_vectors(std::size_t n, std::size_t length, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::vector<float>> v(n, std::vector<float>(length));
  for (auto& x : v)
    for (auto& e : x) e = static_cast<float>(rng.normal());
  return v;
}

std::vector<double> weighted_average(const std::vector<std::vector<float>>& v, const std::vector<double>& w) {
  std::vector<double> avg(v[0].size(), 0.0);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (std::size_t p = 0; p < v.size(); ++p)
    for (std::size_t i = 0; i < avg.size(); ++i) avg[i] += w[p] * v[p][i] / total;
  return avg;
}

TEST(ButterflyRound, EverySenderEndsWithTheWeightedAverage) {
  const std::size_t n = 5, length = 10'000;
  Swarm swarm(uniform_links(n, 1e8));
  const std::vector<double> w = {1, 2, 3, 4, 5};
  auto values = random_vectors(n, length, 3);
  const auto expected = weighted_average(values, w);
  swarm.start(plan_for(w, {0.1, 0.2, 0.3, 0.2, 0.2}, length), &values);
  swarm.world->run();
  ASSERT_EQ(swarm.outcomes.size(), n);
  for (const auto& o : swarm.outcomes) {
    EXPECT_TRUE(o.completed);
    EXPECT_DOUBLE_EQ(o.fraction_averaged, 1.0);
  }
  for (std::size_t p = 0; p < n; ++p)
    for (std::size_t i = 0; i < length; ++i) ASSERT_NEAR(values[p][i], expected[i], 1e-5) << "peer " << p << " elem " << i;
}

TEST(ButterflyRound, ReducersWeightEachPartByTheWeightItCarries) {
  // Every member starts from the same plan (weights 1: "everyone sends") and then sets its own
  // weight, as a training peer does with the samples it accumulated; nobody knows the others'.
  const std::size_t n = 4, length = 8'000;
  Swarm swarm(uniform_links(n, 1e8));
  const std::vector<double> actual = {10, 30, 5, 55};
  auto values = random_vectors(n, length, 9);
  const auto expected = weighted_average(values, actual);
  const RoundPlan shared = plan_for({1, 1, 1, 1}, {0.25, 0.25, 0.25, 0.25}, length);
  for (std::size_t m = 0; m < n; ++m) {
    RoundPlan mine = shared;
    mine.weights[m] = actual[m];
    swarm.services[m]->start_round(mine, values[m], {}, [&swarm](const RoundOutcome& o) { swarm.outcomes.push_back(o); });
  }
  swarm.world->run();
  ASSERT_EQ(swarm.outcomes.size(), n);
  for (std::size_t p = 0; p < n; ++p)
    for (std::size_t i = 0; i < length; ++i) ASSERT_NEAR(values[p][i], expected[i], 1e-5) << "peer " << p << " elem " << i;
}

TEST(ButterflyRound, AuxiliaryPeersReduceWithoutSendingAndZeroFractionPeersOnlySend) {
  // Peer 3 is auxiliary (weight 0, reduces half); peer 0 reduces nothing (client-mode-like).
  const std::size_t n = 4, length = 6'000;
  Swarm swarm(uniform_links(n, 1e8));
  const std::vector<double> w = {1, 1, 2, 0};
  auto values = random_vectors(n, length, 5);
  std::vector<std::vector<float>> senders = {values[0], values[1], values[2]};
  const auto expected = weighted_average(senders, {1, 1, 2});
  swarm.start(plan_for(w, {0, 0.25, 0.25, 0.5}, length), &values);
  swarm.world->run();
  ASSERT_EQ(swarm.outcomes.size(), n);
  for (std::size_t p = 0; p < 3; ++p)
    for (std::size_t i = 0; i < length; ++i) ASSERT_NEAR(values[p][i], expected[i], 1e-5);
  // The auxiliary peer sent only averaged parts: nothing of its own vector.
  EXPECT_EQ(swarm.world->bytes_delivered(), swarm.world->bytes_sent(0) + swarm.world->bytes_sent(1) +
                                                  swarm.world->bytes_sent(2) + swarm.world->bytes_sent(3));
}

TEST(ButterflyRound, Fp16OnTheWireStaysWithinHalfPrecision) {
  const std::size_t n = 4, length = 5'000;
  Swarm swarm(uniform_links(n, 1e8));
  const std::vector<double> w = {1, 1, 1, 1};
  auto values = random_vectors(n, length, 9);
  const auto expected = weighted_average(values, w);
  swarm.start(plan_for(w, {0.25, 0.25, 0.25, 0.25}, length, codec::Codec::Fp16), &values);
  swarm.world->run();
  for (std::size_t p = 0; p < n; ++p)
    for (std::size_t i = 0; i < length; ++i)
      ASSERT_NEAR(values[p][i], expected[i], 4e-3 * (1 + std::abs(expected[i])));  // two fp16 roundings
}

// Bytes on the wire follow from the plan alone: every sender streams every other member's span
// and every reducer returns its span to every other sender, each part framed and encoded exactly.
TEST(ButterflyRound, ChargesExactlyTheEncodedBytes) {
  const std::size_t n = 3, length = 3'000;
  Swarm swarm(uniform_links(n, 1e8));
  const RoundPlan plan = plan_for({1, 1, 1}, {0.5, 0.3, 0.2}, length, codec::Codec::Fp16, 1024);
  swarm.start(plan, nullptr);
  swarm.world->run();
  auto part_bytes = [&](std::size_t j, std::uint32_t k) {
    PartHeader h;
    h.elements = static_cast<std::uint32_t>(plan.part_count(j, k));
    h.codec = plan.codec;
    return encode_part(h, {}, true).wire_size();
  };
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t expected = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      for (std::uint32_t k = 0; k < plan.parts_in_span(j); ++k) expected += part_bytes(j, k);  // i's parts to j
      for (std::uint32_t k = 0; k < plan.parts_in_span(i); ++k) expected += part_bytes(i, k);  // averages to j
    }
    EXPECT_EQ(swarm.world->bytes_sent(i), expected) << "peer " << i;
  }
  // 1024-byte parts of fp16 carry 512 elements: the 1,500-element span travels in 3 parts.
  EXPECT_EQ(plan.parts_in_span(0), 3u);
}

TEST(ButterflyRound, TimeFollowsTheUploadRateForTwoPeers) {
  // Two peers, 8 Mb/s up, 1 MB of fp32 each, equal halves: each sends 0.5 MB and returns 0.5 MB
  // over its upload, the two directions in parallel: ~1 s plus framing and latency. Nothing is
  // shared, so the memory world's upload FIFO gives what the fluid model gives.
  Swarm swarm(uniform_links(2, 8e6, 0.0));
  const std::uint64_t length = 250'000;  // 1 MB of fp32
  const RoundPlan plan = plan_for({1, 1}, {0.5, 0.5}, length, codec::Codec::Fp32, 1 << 30);
  swarm.start(plan, nullptr);
  swarm.world->run();
  ASSERT_EQ(swarm.outcomes.size(), 2u);
  // One part per span: the send (0.5 s), then the averaged part back (0.5 s), header bytes aside.
  EXPECT_NEAR(swarm.outcomes[0].finished, 1.0, 1e-3);
}

TEST(ButterflyRound, MalformedAndForeignMessagesAreDroppedWithoutHarm) {
  const std::size_t n = 3, length = 1'000;
  Swarm swarm(uniform_links(n, 1e8));
  auto values = random_vectors(n, length, 11);
  const auto expected = weighted_average(values, {1, 1, 1});
  swarm.start(plan_for({1, 1, 1}, {0.4, 0.3, 0.3}, length), &values);
  // Garbage from peer 2 to peer 0 before the real traffic.
  Message junk;
  junk.bytes = {static_cast<std::uint8_t>(ServiceId::Averaging), 1, 2, 3};
  swarm.world->env(2).send(0, junk);
  swarm.world->run();
  EXPECT_EQ(swarm.services[0]->malformed_messages(), 1u);
  for (std::size_t p = 0; p < n; ++p)
    for (std::size_t i = 0; i < length; ++i) ASSERT_NEAR(values[p][i], expected[i], 1e-5);
}

}  // namespace
}  // namespace swarmlab::core::averaging
