#include "core/allreduce/halving_doubling_averager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "core/rng.h"
#include "support/memory_world.h"

namespace swarmlab::core::allreduce {
namespace {

using averaging::RoundOutcome;
using averaging::RoundPlan;
using testing::MemoryWorld;

// n peers, each with a halving-doubling averager as its sink, and a random vector and weight each.
struct Members {
  Members(std::size_t n, std::uint64_t length, std::uint64_t seed = 3)
      : world(n, testing::PeerSpec{0.005, 50e6, 0}, seed), length(length) {
    Rng rng(seed, 7);
    for (PeerId p = 0; p < n; ++p) {
      averagers.push_back(std::make_unique<HalvingDoublingAverager>(world.env(p)));
      world.env(p).set_sink(averagers.back().get());
      std::vector<float> x(length);
      for (float& v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
      inputs.push_back(x);
      weights.push_back(1 + static_cast<double>(p % 4));
    }
    values = inputs;
    outcomes.resize(n);
  }

  // AR's spans over every member; `idle` members send nothing (weight 0).
  RoundPlan plan(std::uint64_t round_id, const std::vector<bool>& idle = {}) const {
    RoundPlan plan;
    plan.round_id = round_id;
    plan.codec = codec::Codec::Fp32;
    plan.part_bytes = 4096;
    std::vector<double> fractions;
    for (PeerId p = 0; p < averagers.size(); ++p) {
      plan.members.push_back(p);
      const bool sends = idle.empty() || !idle[p];
      plan.weights.push_back(sends ? weights[p] : 0);
      fractions.push_back(sends ? 1 : 0);
    }
    plan.span_begin = averaging::apportion(length, fractions);
    return plan;
  }

  // Starts peer p's side at time t (peers start at different times: early parts must be kept).
  void start_at(PeerId p, Seconds t, const RoundPlan& plan) {
    world.at(t, [this, p, plan] {
      const bool sends = plan.sends(p);
      averagers[p]->start_round(plan, sends ? std::span<float>(values[p]) : std::span<float>(), {},
                                [this, p](const RoundOutcome& o) { outcomes[p] = o; });
    });
  }

  // The weighted average of the inputs of `senders`.
  std::vector<double> average(const std::vector<PeerId>& senders) const {
    std::vector<double> sum(length, 0);
    double total = 0;
    for (PeerId p : senders) {
      for (std::uint64_t i = 0; i < length; ++i) sum[i] += weights[p] * inputs[p][i];
      total += weights[p];
    }
    for (double& s : sum) s /= total;
    return sum;
  }

  MemoryWorld world;
  std::uint64_t length;
  std::vector<std::unique_ptr<HalvingDoublingAverager>> averagers;
  std::vector<std::vector<float>> inputs, values;
  std::vector<double> weights;
  std::vector<std::optional<RoundOutcome>> outcomes;
};

TEST(HalvingDoublingAverager, AveragesExactlyAmongSendersThatStartAtDifferentTimes) {
  // Seven members, one of which sends nothing: six exchange (four, and two extras folded in).
  Members m(7, 1000);
  const std::vector<bool> idle = {false, false, false, true, false, false, false};
  const RoundPlan plan = m.plan(0xfeedbeef, idle);
  for (PeerId p = 0; p < 7; ++p) m.start_at(p, 0.01 * ((p * 5) % 7), plan);
  m.world.run();
  const std::vector<double> expected = m.average({0, 1, 2, 4, 5, 6});
  for (PeerId p = 0; p < 7; ++p) {
    ASSERT_TRUE(m.outcomes[p]) << p;
    EXPECT_TRUE(m.outcomes[p]->completed);
    EXPECT_EQ(m.outcomes[p]->fraction_averaged, 1.0);
    EXPECT_TRUE(m.outcomes[p]->unaveraged_spans.empty());
    EXPECT_TRUE(m.outcomes[p]->dropped_senders.empty());
    if (idle[p]) {
      EXPECT_EQ(m.values[p], m.inputs[p]);  // untouched
      continue;
    }
    for (std::uint64_t i = 0; i < m.length; ++i) ASSERT_NEAR(m.values[p][i], expected[i], 1e-5) << p << " " << i;
  }
  EXPECT_EQ(m.averagers[0]->malformed_messages(), 0u);
  // A finished round answers pulls for a partner timeout, then leaves no timer behind.
  for (PeerId p = 0; p < 7; ++p) EXPECT_EQ(m.world.outstanding_timers(p), 0u) << p;
}

TEST(HalvingDoublingAverager, RoundIdsNeedNotIncrease) {
  // Matchmaking draws group ids at random: a later round may have a smaller id.
  Members m(4, 256);
  for (std::uint64_t id : {900u, 17u, 5000u}) {
    m.values = m.inputs;
    std::fill(m.outcomes.begin(), m.outcomes.end(), std::nullopt);
    const RoundPlan plan = m.plan(id);
    for (PeerId p = 0; p < 4; ++p) m.start_at(p, m.world.now(), plan);
    m.world.run();
    const std::vector<double> expected = m.average({0, 1, 2, 3});
    for (PeerId p = 0; p < 4; ++p) {
      ASSERT_TRUE(m.outcomes[p] && m.outcomes[p]->completed) << id << " " << p;
      EXPECT_TRUE(m.averagers[p]->has_round(id));
      for (std::uint64_t i = 0; i < m.length; ++i) ASSERT_NEAR(m.values[p][i], expected[i], 1e-5);
    }
  }
  EXPECT_THROW(m.averagers[0]->start_round(m.plan(17), m.values[0], {}, nullptr), std::invalid_argument);
}

TEST(HalvingDoublingAverager, ALostMemberLeavesSurvivorsTheSameValuesOutsideTheSpansTheyReport) {
  // Four members; member 3 crashes before the round, and its partners take their steps without
  // it. Block 3, which it would have reduced, comes back to nobody; block 2 (reduced by member 2
  // without 1's half, which went to 3) reaches member 0 but not member 1, whose doubling partner
  // for it was 3. Where a survivor reports a final average, it holds the same values as every
  // other survivor that does.
  Members m(4, 400);
  m.world.set_down(3);
  const RoundPlan plan = m.plan(42);
  averaging::Timeouts timeouts;
  timeouts.sender = 0.5;
  for (PeerId p = 0; p < 3; ++p)
    m.world.at(0, [&m, &plan, timeouts, p] {
      m.averagers[p]->start_round(plan, m.values[p], timeouts, [&m, p](const RoundOutcome& o) { m.outcomes[p] = o; });
    });
  m.world.run();
  const std::vector<std::vector<PeerId>> stale = {{3}, {2, 3}, {3}};
  for (PeerId p = 0; p < 3; ++p) {
    ASSERT_TRUE(m.outcomes[p]) << p;
    const RoundOutcome& o = *m.outcomes[p];
    EXPECT_TRUE(o.completed);
    EXPECT_EQ(o.unaveraged_spans, stale[p]) << p;  // under AR's equal split, span k is block k
    EXPECT_NEAR(o.fraction_averaged, 1 - 0.25 * static_cast<double>(stale[p].size()), 1e-12) << p;
    EXPECT_EQ(o.dropped_senders, p == 2 || p == 1 ? std::vector<PeerId>{3} : std::vector<PeerId>{}) << p;
  }
  const std::uint64_t quarter = m.length / 4;
  for (std::uint64_t b = 0; b < 4; ++b)
    for (PeerId p = 0; p < 3; ++p)
      for (PeerId q = 0; q < 3; ++q) {
        const auto final_at = [&](PeerId x) {
          return std::find(stale[x].begin(), stale[x].end(), b) == stale[x].end();
        };
        if (!final_at(p) || !final_at(q)) continue;
        for (std::uint64_t i = b * quarter; i < (b + 1) * quarter; ++i) ASSERT_EQ(m.values[p][i], m.values[q][i]);
      }
  // Block 0 reached its reducer from members 0, 1 and 2 (1's contribution through member 0's
  // exchange with it), block 2 from 0 and 2 only.
  const std::vector<double> block0 = m.average({0, 1, 2}), block2 = m.average({0, 2});
  for (std::uint64_t i = 0; i < quarter; ++i) ASSERT_NEAR(m.values[0][i], block0[i], 1e-5);
  for (std::uint64_t i = 2 * quarter; i < 3 * quarter; ++i) ASSERT_NEAR(m.values[0][i], block2[i], 1e-5);
}

TEST(HalvingDoublingAverager, RefusesCenteredClipAndDropsMalformedMessages) {
  Members m(2, 64);
  RoundPlan plan = m.plan(1);
  plan.clip = averaging::CenteredClip{};
  EXPECT_THROW(m.averagers[0]->start_round(plan, m.values[0], {}, nullptr), std::invalid_argument);
  Message junk;
  junk.bytes = {static_cast<std::uint8_t>(ServiceId::AllReduce), 9, 9};
  m.averagers[0]->handle(1, junk);
  EXPECT_EQ(m.averagers[0]->malformed_messages(), 1u);
}

}  // namespace
}  // namespace swarmlab::core::allreduce
