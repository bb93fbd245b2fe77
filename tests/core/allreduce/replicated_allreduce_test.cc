#include "core/allreduce/replicated_allreduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "core/allreduce/replica_peer.h"
#include "core/allreduce/requeue.h"
#include "core/rng.h"
#include "support/memory_world.h"

namespace swarmlab::core::allreduce {
namespace {

using testing::MemoryWorld;

// P groups of R replicas in the memory world: peer g * R + r is replica r of group g. The memory
// world sends each peer's messages one after another through one uplink, so a leader's heartbeats
// wait behind its whole chunk; links are fast enough here that a step takes well under the 150 ms
// election timeout (the simulator's flow model, like TCP, queues per connection).
class Swarm {
 public:
  Swarm(std::uint32_t groups, std::uint32_t replicas, std::uint64_t length, std::uint64_t seed = 1,
        double upload_bps = 50e6)
      : P(groups), R(replicas), world(groups * replicas, testing::PeerSpec{0.005, upload_bps, 0}, seed) {
    for (std::uint32_t g = 0; g < P; ++g) {
      std::vector<PeerId> members;
      for (std::uint32_t r = 0; r < R; ++r) members.push_back(g * R + r);
      members_.push_back(members);
      for (PeerId p : members) {
        peers.push_back(std::make_unique<ReplicaPeer>(world.env(p), replica_group_raft_config(g + 1), members));
        world.env(p).set_sink(peers.back().get());
      }
    }
    Rng rng(seed, 99);
    for (std::uint32_t g = 0; g < P; ++g) {
      weights.push_back(1 + g % 3);
      std::vector<float> x(length);
      for (float& v : x) v = static_cast<float>(rng.uniform() * 2 - 1);
      inputs.push_back(x);
    }
    expected.assign(length, 0);  // start() sets it
    world.run_for(1.0);  // elections
  }

  std::optional<PeerId> leader(std::uint32_t g) {
    for (PeerId p : members_[g])
      if (world.is_up(p) && peers[p]->raft().is_leader()) return p;
    return std::nullopt;
  }

  // Starts a round on every replica that is up, the current leaders first in their groups.
  void start(std::uint64_t round_id = 1, ReplicaTimeouts timeouts = {}) {
    ReplicaGroupPlan plan;
    plan.round_id = round_id;
    plan.weights = weights;
    plan.length = inputs[0].size();
    plan.codec = codec::Codec::Fp32;
    plan.part_bytes = 16 * 1024;
    for (std::uint32_t g = 0; g < P; ++g) {
      auto members = members_[g];
      if (auto l = leader(g)) std::stable_partition(members.begin(), members.end(), [&](PeerId p) { return p == *l; });
      plan.groups.push_back(members);
    }
    start(plan, timeouts);
  }

  // Starts `plan` (groups named by their replicas, as here) on its replicas that are up; the
  // expected result becomes its weighted average.
  void start(const ReplicaGroupPlan& plan, ReplicaTimeouts timeouts = {}) {
    last_plan = plan;
    values.assign(P * R, {});
    outcomes.assign(P * R, std::nullopt);
    std::fill(expected.begin(), expected.end(), 0.0);
    double total = 0;
    for (double w : plan.weights) total += w;
    for (std::size_t i = 0; i < plan.groups.size(); ++i) {
      const std::uint32_t g = plan.groups[i].front() / R;
      for (std::size_t e = 0; e < expected.size(); ++e) expected[e] += plan.weights[i] * inputs[g][e] / total;
    }
    started_at = world.now();
    for (const auto& members : plan.groups)
      for (PeerId p : members) {
        if (!world.is_up(p)) continue;
        values[p] = inputs[p / R];
        peers[p]->start_round(plan, values[p], timeouts, [this, p](const ReplicaOutcome& o) { outcomes[p] = o; });
      }
  }

  // Every replica of group `g` goes down `after` seconds from now.
  void lose_group(std::uint32_t g, Seconds after, MemoryWorld::Departure how = MemoryWorld::Departure::Crash) {
    for (PeerId p : members_[g]) world.after(after, [this, p, how] { world.set_down(p, how); });
  }

  // Runs a round with nobody failing; returns its round_time().
  Seconds healthy_round() {
    start();
    world.run_for(30);
    return round_time();
  }

  // Until the last replica that finished did.
  Seconds round_time() const {
    Seconds t = 0;
    for (const auto& o : outcomes)
      if (o) t = std::max(t, o->finished - started_at);
    return t;
  }

  double max_error(PeerId p) const {
    double e = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) e = std::max(e, std::abs(values[p][i] - expected[i]));
    return e;
  }

  std::uint32_t P, R;
  MemoryWorld world;
  std::vector<std::unique_ptr<ReplicaPeer>> peers;
  std::vector<std::vector<PeerId>> members_;
  std::vector<double> weights;
  std::vector<std::vector<float>> inputs;
  std::vector<double> expected;
  std::vector<std::vector<float>> values;
  std::vector<std::optional<ReplicaOutcome>> outcomes;
  ReplicaGroupPlan last_plan;
  Seconds started_at = 0;
};

TEST(ReplicatedAllReduce, EveryReplicaEndsWithTheExactWeightedAverage) {
  // Powers of two, and counts with extra groups folded in and served (3 = 2 + 1, 6 = 4 + 2, 7 = 4 + 3).
  for (std::uint32_t P : {8u, 3u, 6u, 7u})
  for (std::uint32_t R : {1u, 3u}) {
    Swarm s(P, R, 100'000);
    for (std::uint32_t g = 0; g < P; ++g) ASSERT_TRUE(s.leader(g)) << g;
    s.start();
    s.world.run_for(30);
    for (PeerId p = 0; p < P * R; ++p) {
      ASSERT_TRUE(s.outcomes[p]) << "P=" << P << " R=" << R << " peer " << p;
      EXPECT_TRUE(s.outcomes[p]->completed);
      EXPECT_EQ(s.outcomes[p]->fraction_averaged, 1.0);
      EXPECT_TRUE(s.outcomes[p]->lost_chunks.empty());
      EXPECT_LT(s.max_error(p), 1e-5) << "P=" << P << " R=" << R << " peer " << p;
    }
  }
}

TEST(ReplicatedAllReduce, ReplicationCostsTheLeadersUploadButNotCorrectness) {
  Swarm one(4, 1, 200'000), three(4, 3, 200'000);
  one.start();
  three.start();
  one.world.run_for(30);
  three.world.run_for(30);
  Seconds t1 = 0, t3 = 0;
  for (auto& o : one.outcomes) t1 = std::max(t1, o->finished - o->started);
  for (PeerId p = 0; p < 12; ++p)
    if (three.outcomes[p]->led) t3 = std::max(t3, three.outcomes[p]->finished - three.outcomes[p]->started);
  // The leader's upload carries its own chunk and two forwarded copies of the partner's.
  EXPECT_GT(t3, 1.7 * t1);
  EXPECT_LT(t3, 3.5 * t1);
}

TEST(ReplicatedAllReduce, AFollowerThatFailsGoesUnnoticed) {
  Swarm base(8, 3, 200'000, 3), s(8, 3, 200'000, 3);
  base.start();
  base.world.run_for(30);
  s.start();
  const PeerId leader = *s.leader(2);
  const PeerId follower = leader == 6 ? 7 : 6;
  const Seconds tb0 = base.outcomes[0]->finished - base.started_at;
  s.world.after(0.4 * tb0, [&] { s.world.set_down(follower); });
  s.world.run_for(30);
  Seconds tb = 0, ts = 0;
  for (PeerId p = 0; p < 24; ++p) {
    if (p == follower) continue;
    ASSERT_TRUE(s.outcomes[p]) << p;
    EXPECT_EQ(s.outcomes[p]->fraction_averaged, 1.0);
    EXPECT_LT(s.max_error(p), 1e-5) << p;
    EXPECT_FALSE(s.outcomes[p]->took_over_at) << p << " at step " << *s.outcomes[p]->took_over_at << " led " << s.outcomes[p]->led;
    tb = std::max(tb, base.outcomes[p]->finished - base.started_at);
    ts = std::max(ts, s.outcomes[p]->finished - s.started_at);
  }
  EXPECT_LE(ts, tb * 1.01);
}

TEST(ReplicatedAllReduce, ALeaderThatFailsCostsAnElectionAndARepeatedStep) {
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    Swarm base(8, 3, 200'000, seed), s(8, 3, 200'000, seed);
    base.start();
    base.world.run_for(30);
    s.start();
    const PeerId leader = *s.leader(seed % 8);
    const Seconds tb0 = base.outcomes[0]->finished - base.started_at;
    s.world.after((0.1 + 0.13 * static_cast<double>(seed)) * tb0, [&] { s.world.set_down(leader); });
    s.world.run_for(30);
    Seconds tb = 0, ts = 0;
    bool took_over = false;
    for (PeerId p = 0; p < 24; ++p) {
      if (p == leader) continue;
      ASSERT_TRUE(s.outcomes[p]) << "seed " << seed << " peer " << p;
      EXPECT_TRUE(s.outcomes[p]->completed);
      EXPECT_EQ(s.outcomes[p]->fraction_averaged, 1.0) << p;
      EXPECT_LT(s.max_error(p), 1e-5) << p;
      EXPECT_TRUE(s.outcomes[p]->lost_chunks.empty());
      if (s.outcomes[p]->took_over_at) took_over = true;
      tb = std::max(tb, base.outcomes[p]->finished - base.started_at);
      ts = std::max(ts, s.outcomes[p]->finished - s.started_at);
    }
    EXPECT_TRUE(took_over) << seed;
    // Slower by an election (150-300 ms plus a round trip) and about one step, not a restart.
    EXPECT_GT(ts, tb + 0.15) << seed;
    EXPECT_LT(ts, tb + 0.35 + tb / 2) << seed;
  }
}

TEST(ReplicatedAllReduce, ALostGroupIsDroppedAndItsChunksRecorded) {
  for (std::uint64_t seed = 7; seed <= 10; ++seed)
  for (bool silent : {false, true}) {
    Swarm base(8, 3, 100'000, seed), s(8, 3, 100'000, seed);
    base.start();
    base.world.run_for(30);
    const Seconds tb0 = base.outcomes[0]->finished - base.started_at;
    ReplicaTimeouts t;
    t.partner = 2;
    s.start(1, t);
    // Group 3 goes during the halving steps, when other groups still need its partial sums.
    s.lose_group(3, (0.1 + 0.06 * static_cast<double>(seed - 7)) * tb0,
                 silent ? MemoryWorld::Departure::Silent : MemoryWorld::Departure::Crash);
    s.world.run_for(60);
    std::size_t lost = 0;
    for (PeerId p = 0; p < 24; ++p) {
      if (p / 3 == 3) continue;
      ASSERT_TRUE(s.outcomes[p]) << p << (silent ? " silent" : " crash");
      EXPECT_TRUE(s.outcomes[p]->completed);
      EXPECT_LT(s.outcomes[p]->fraction_averaged, 1.0) << "seed " << seed << " peer " << p;
      for (const LostChunk& c : s.outcomes[p]->lost_chunks) {
        EXPECT_EQ(c.group, 3u);
        ++lost;
      }
    }
    EXPECT_GT(lost, 0u);
  }
}

// With extra groups, a leader lost on either side of a one-sided step: the new leader pulls the
// extra's vector again, or the result it is owed, and the round stays exact.
TEST(ReplicatedAllReduce, WithExtraGroupsALeaderThatFailsIsReplaced) {
  for (std::uint64_t seed = 1; seed <= 4; ++seed)
  for (std::uint32_t group : {0u, 4u}) {
    Swarm base(6, 3, 100'000, seed), s(6, 3, 100'000, seed);
    const Seconds tb = base.healthy_round();
    s.start();
    const PeerId leader = *s.leader(group);
    s.world.after((0.2 * static_cast<double>(seed) - 0.1) * tb, [&] { s.world.set_down(leader); });
    s.world.run_for(30);
    bool took_over = false;
    for (PeerId p = 0; p < 18; ++p) {
      if (p == leader) continue;
      ASSERT_TRUE(s.outcomes[p]) << "seed " << seed << " group " << group << " peer " << p;
      if (s.outcomes[p]->took_over_at) took_over = true;
      EXPECT_TRUE(s.outcomes[p]->completed);
      EXPECT_EQ(s.outcomes[p]->fraction_averaged, 1.0) << "seed " << seed << " group " << group << " peer " << p;
      EXPECT_LT(s.max_error(p), 1e-5) << "seed " << seed << " group " << group << " peer " << p;
      EXPECT_LT(s.outcomes[p]->finished - s.started_at, tb + 0.35 + tb / 2) << "seed " << seed << " group " << group;
    }
    EXPECT_TRUE(took_over) << "seed " << seed << " group " << group;
  }
}

// Six groups: 0-3 exchange, 4 and 5 are folded into 0 and 1 and served by them at the end.
TEST(ReplicatedAllReduce, WithExtraGroupsALostGroupIsDroppedWithoutAStall) {
  for (std::uint32_t R : {1u, 3u}) {
    Swarm base(6, R, 100'000, 5);
    const Seconds tb = base.healthy_round();
    ReplicaTimeouts t;
    t.partner = 2;
    // An extra lost once folded in: its contribution is already in group 0's, so every survivor
    // ends with the exact average, and group 0 serves nobody at the end.
    {
      Swarm s(6, R, 100'000, 5);
      s.start(1, t);
      s.lose_group(4, 0.6 * tb);
      s.world.run_for(60);
      for (PeerId p = 0; p < 6 * R; ++p) {
        if (p / R == 4) continue;
        ASSERT_TRUE(s.outcomes[p]) << "R=" << R << " peer " << p;
        EXPECT_TRUE(s.outcomes[p]->completed);
        EXPECT_EQ(s.outcomes[p]->fraction_averaged, 1.0) << "R=" << R << " peer " << p;
        EXPECT_LT(s.max_error(p), 1e-5) << "R=" << R << " peer " << p;
        EXPECT_LE(s.outcomes[p]->finished - s.started_at, tb * 1.01) << "R=" << R << " peer " << p;
      }
    }
    // Group 1 lost during the halving: every block misses it, and extra 5, which it would have
    // served, drops it (at once on a crash, after the partner timeout when it goes silent) and keeps
    // its own vector; its leader records the chunk.
    for (bool silent : {false, true}) {
      Swarm s(6, R, 100'000, 5);
      s.start(1, t);
      s.lose_group(1, 0.3 * tb, silent ? MemoryWorld::Departure::Silent : MemoryWorld::Departure::Crash);
      s.world.run_for(60);
      std::vector<LostChunk> lost_by_5;
      for (PeerId p = 0; p < 6 * R; ++p) {
        if (p / R == 1) continue;
        ASSERT_TRUE(s.outcomes[p]) << "R=" << R << " peer " << p << (silent ? " silent" : "");
        EXPECT_TRUE(s.outcomes[p]->completed);
        EXPECT_LT(s.outcomes[p]->fraction_averaged, 1.0) << "R=" << R << " peer " << p;
        for (const LostChunk& c : s.outcomes[p]->lost_chunks) EXPECT_EQ(c.group, 1u);
        if (p / R == 5) {
          if (s.outcomes[p]->led) lost_by_5 = s.outcomes[p]->lost_chunks;
          EXPECT_EQ(s.outcomes[p]->fraction_averaged, 0.0);
          for (std::size_t i = 0; i < 100'000; i += 997) ASSERT_EQ(s.values[p][i], s.inputs[5][i]);
        }
        // No stall: at most the partner timeout beyond the healthy round.
        EXPECT_LT(s.outcomes[p]->finished - s.started_at, tb + t.partner + 0.5) << "R=" << R << " peer " << p;
      }
      EXPECT_EQ(lost_by_5, (std::vector<LostChunk>{{5, 1, 0, 100'000}})) << "R=" << R << (silent ? " silent" : "");
    }
  }
}

// The initiator drops a lost group and re-queues its samples (requeue.h): the next round runs among
// the seven survivors, an extra group folded in, and averages exactly with the survivors' larger
// weights, as long as a healthy round.
TEST(ReplicatedAllReduce, AfterALostGroupTheNextRoundRunsWithoutItAndAveragesItsRequeuedSamples) {
  for (std::uint32_t R : {1u, 3u}) {
    Swarm s(8, R, 100'000, 11);
    const Seconds healthy = s.healthy_round();
    ReplicaTimeouts t;
    t.partner = 2;
    s.start(2, t);
    s.lose_group(3, 0.3 * healthy);
    s.world.run_for(30);
    const std::set<std::uint32_t> lost = lost_groups(s.outcomes);
    ASSERT_EQ(lost, (std::set<std::uint32_t>{3})) << "R=" << R;
    const ReplicaGroupPlan next = requeue_lost(s.last_plan, lost);
    ASSERT_EQ(next.groups.size(), 7u);
    double total = 0;
    for (double w : next.weights) total += w;
    double before = 0;
    for (double w : s.weights) before += w;
    EXPECT_NEAR(total, before, 1e-9);  // every sample of the lost round is averaged in the next
    s.world.run_for(1.0);              // groups whose leader changed elect
    s.start(next, t);
    s.world.run_for(30);
    Seconds took = 0;
    for (PeerId p = 0; p < 8 * R; ++p) {
      if (p / R == 3) continue;
      ASSERT_TRUE(s.outcomes[p]) << "R=" << R << " peer " << p;
      EXPECT_TRUE(s.outcomes[p]->completed);
      EXPECT_EQ(s.outcomes[p]->fraction_averaged, 1.0);
      EXPECT_TRUE(s.outcomes[p]->lost_chunks.empty());
      EXPECT_LT(s.max_error(p), 1e-5) << "R=" << R << " peer " << p;
      took = std::max(took, s.outcomes[p]->finished - s.started_at);
    }
    // No stall; the extra group's whole vector, folded in and served, costs about one more round.
    EXPECT_LT(took, 2.5 * healthy) << "R=" << R;
  }
}

TEST(ReplicatedAllReduce, MalformedBytesNeverCrashAReplica) {
  Swarm s(2, 1, 1000);
  s.start();
  Rng rng(4, 4);
  for (int i = 0; i < 2000; ++i) {
    Message m;
    m.bytes.resize(1 + rng.below(40));
    for (auto& b : m.bytes) b = static_cast<std::uint8_t>(rng.below(256));
    m.bytes[0] = 8;
    s.peers[0]->handle(1, m);
  }
  s.world.run_for(10);
  ASSERT_TRUE(s.outcomes[0]);
  EXPECT_LT(s.max_error(0), 1e-5);
}

}  // namespace
}  // namespace swarmlab::core::allreduce
