// Failures inside a butterfly round (docs/dedloc.md §4), checked against values computed by hand.
//
// 16 peers, weight 1 each, equal shares. Peer i's vector is the constant i + 1, so any average is
// easy to state: over all 16 peers it is 136/16 = 8.5; without peer 5 (value 6) it is 130/15.
// Peer 5 dies after it has delivered 40% of its parts. Then, per the rules:
// - a part of reducer j's span that peer 5 delivered before dying keeps its contribution: 8.5;
// - a part it never delivered is averaged over the other 15: 130/15 (its weight leaves the
//   denominator);
// - peer 5's own span: a survivor keeps the averaged parts peer 5 returned before dying (8.5) and
//   its own local value for the rest.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/averaging/part_message.h"
#include "swarm_fixture.h"

namespace swarmlab::core::averaging {
namespace {

using testing::plan_for;
using testing::MemoryWorld;
using testing::Swarm;
using testing::uniform_links;

constexpr std::size_t kPeers = 16;
constexpr PeerId kVictim = 5;
constexpr std::uint64_t kPartElements = 512;  // 2 KiB parts of fp32
constexpr std::uint64_t kLength = kPeers * 4 * kPartElements;  // 4 parts per span

struct FailureRun {
  Swarm swarm{uniform_links(kPeers, 1e8)};
  RoundPlan plan;
  std::vector<std::vector<float>> values;
  std::set<std::pair<PeerId, std::uint32_t>> delivered_parts;  // (reducer, part) the victim delivered
  std::map<PeerId, std::set<std::uint32_t>> delivered_averages;  // survivor -> victim's parts it got
  Timeouts timeouts;
  double killed_at = -1;

  void run(MemoryWorld::Departure how) {
    plan = plan_for(std::vector<double>(kPeers, 1.0), std::vector<double>(kPeers, 1.0), kLength,
                    codec::Codec::Fp32, kPartElements * 4);
    values.assign(kPeers, std::vector<float>(kLength));
    for (PeerId i = 0; i < kPeers; ++i) std::fill(values[i].begin(), values[i].end(), static_cast<float>(i + 1));
    const std::uint64_t victim_parts = (kPeers - 1) * 4;
    const auto threshold = static_cast<std::size_t>(std::ceil(0.4 * static_cast<double>(victim_parts)));
    swarm.world->on_deliver = [&, how, threshold](PeerId from, PeerId to, const Message& m) {
      // Deliveries at the very instant of the 40% mark, before the failure event runs, count too.
      if (from != kVictim || !swarm.world->is_up(kVictim)) return;
      const DecodedPart d = decode_part(m);
      if (d.header.kind == PartKind::Part) {
        delivered_parts.insert({to, d.header.part});
        if (delivered_parts.size() == threshold && killed_at < 0) {
          killed_at = swarm.world->now();
          swarm.world->after(0, [this, how] { swarm.world->set_down(kVictim, how); });
        }
      } else {
        delivered_averages[to].insert(d.header.part);
      }
    };
    timeouts.sender = 2;
    timeouts.reducer = 4;
    timeouts.round = 60;
    swarm.start(plan, &values, timeouts);
    swarm.world->run();
  }

  double expected(PeerId survivor, std::uint64_t element) const {
    const std::size_t reducer = static_cast<std::size_t>(element / (4 * kPartElements));
    const auto part = static_cast<std::uint32_t>((element % (4 * kPartElements)) / kPartElements);
    if (reducer == kVictim) {
      auto it = delivered_averages.find(survivor);
      const bool got = it != delivered_averages.end() && it->second.count(part);
      return got ? 8.5 : survivor + 1.0;
    }
    return delivered_parts.count({static_cast<PeerId>(reducer), part}) ? 8.5 : 130.0 / 15.0;
  }
};

void check_survivors(const FailureRun& r, double deadline) {
  ASSERT_GE(r.killed_at, 0) << "the victim never reached 40% of its parts";
  ASSERT_EQ(r.swarm.outcomes.size(), kPeers - 1) << "every survivor finishes";
  for (std::size_t k = 0; k < r.swarm.outcomes.size(); ++k) {
    const RoundOutcome& o = r.swarm.outcomes[k];
    EXPECT_TRUE(o.completed);
    EXPECT_LE(o.finished, deadline);
    EXPECT_NE(r.swarm.finished_peers[k], kVictim);
  }
  std::size_t with_victim = 0, without_victim = 0;
  for (PeerId s = 0; s < kPeers; ++s) {
    if (s == kVictim) continue;
    for (std::uint64_t e = 0; e < kLength; e += 7) {
      ASSERT_NEAR(r.values[s][e], r.expected(s, e), 1e-5) << "survivor " << s << " element " << e;
      (r.expected(s, e) == 8.5 ? with_victim : without_victim)++;
    }
  }
  // Both rules were exercised.
  EXPECT_GT(with_victim, 0u);
  EXPECT_GT(without_victim, 0u);
}

TEST(ButterflyFailure, CrashAfter40PercentOfPartsFollowsTheAveragingRules) {
  FailureRun r;
  r.run(MemoryWorld::Departure::Crash);
  // A crash closes connections: survivors react at once, long before any timeout.
  check_survivors(r, r.killed_at + 0.5);
  // Each survivor's averaged share: everything but the parts of the victim's span it never got.
  for (std::size_t k = 0; k < r.swarm.outcomes.size(); ++k) {
    const PeerId s = r.swarm.finished_peers[k];
    const auto it = r.delivered_averages.find(s);
    const double got = it == r.delivered_averages.end() ? 0 : static_cast<double>(it->second.size());
    EXPECT_NEAR(r.swarm.outcomes[k].fraction_averaged, (15 * 4 + got) / 64.0, 1e-12);
    // The victim's span is the one that did not come back whole (unless every part of it did).
    const std::vector<PeerId> unaveraged = got == 4 ? std::vector<PeerId>{} : std::vector<PeerId>{kVictim};
    EXPECT_EQ(r.swarm.outcomes[k].unaveraged_spans, unaveraged) << "survivor " << s;
  }
}

TEST(ButterflyFailure, SilentDepartureIsDetectedByTheTimeouts) {
  FailureRun r;
  r.run(MemoryWorld::Departure::Silent);
  // Nobody is told: reducers drop the victim after sender_timeout, senders after reducer_timeout.
  check_survivors(r, r.killed_at + r.timeouts.reducer + 0.5);
  double last = 0;
  for (const auto& o : r.swarm.outcomes) last = std::max(last, o.finished);
  EXPECT_GE(last, r.killed_at + r.timeouts.sender);
}

TEST(ButterflyFailure, RoundTimeoutFailsTheRoundAndReportsTheAveragedShare) {
  // Two peers; peer 1 vanishes before sending anything and timeouts are longer than the round's.
  Swarm swarm(uniform_links(2, 1e8));
  const RoundPlan plan = plan_for({1, 1}, {0.5, 0.5}, 1000);
  std::vector<std::vector<float>> values(2, std::vector<float>(1000, 1.0f));
  swarm.world->set_down(1, MemoryWorld::Departure::Silent);
  Timeouts t;
  t.sender = 100;
  t.reducer = 200;
  t.round = 3;
  swarm.services[0]->start_round(plan, values[0], t, [&](const RoundOutcome& o) { swarm.outcomes.push_back(o); });
  swarm.world->run();
  ASSERT_EQ(swarm.outcomes.size(), 1u);
  EXPECT_FALSE(swarm.outcomes[0].completed);
  EXPECT_DOUBLE_EQ(swarm.outcomes[0].finished, 3.0);
  EXPECT_DOUBLE_EQ(swarm.outcomes[0].fraction_averaged, 0.0);  // its own half never completed either
  EXPECT_EQ(swarm.outcomes[0].unaveraged_spans, (std::vector<PeerId>{0, 1}));
  for (float v : values[0]) EXPECT_EQ(v, 1.0f);                // it proceeds with its local vector
}

}  // namespace
}  // namespace swarmlab::core::averaging
