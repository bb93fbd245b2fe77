#include "core/allreduce/replicated_allreduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "core/allreduce/replica_peer.h"
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
    expected.assign(length, 0);
    double total = 0;
    for (double w : weights) total += w;
    for (std::uint32_t g = 0; g < P; ++g)
      for (std::uint64_t i = 0; i < length; ++i) expected[i] += weights[g] * inputs[g][i] / total;
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
    values.assign(P * R, {});
    outcomes.assign(P * R, std::nullopt);
    started_at = world.now();
    for (std::uint32_t g = 0; g < P; ++g)
      for (PeerId p : members_[g]) {
        if (!world.is_up(p)) continue;
        values[p] = inputs[g];
        peers[p]->start_round(plan, values[p], timeouts, [this, p](const ReplicaOutcome& o) { outcomes[p] = o; });
      }
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
  Seconds started_at = 0;
};

TEST(ReplicatedAllReduce, EveryReplicaEndsWithTheExactWeightedAverage) {
  for (std::uint32_t R : {1u, 3u}) {
    Swarm s(8, R, 100'000);
    for (std::uint32_t g = 0; g < 8; ++g) ASSERT_TRUE(s.leader(g)) << g;
    s.start();
    s.world.run_for(30);
    for (PeerId p = 0; p < 8 * R; ++p) {
      ASSERT_TRUE(s.outcomes[p]) << "R=" << R << " peer " << p;
      EXPECT_TRUE(s.outcomes[p]->completed);
      EXPECT_EQ(s.outcomes[p]->fraction_averaged, 1.0);
      EXPECT_TRUE(s.outcomes[p]->lost_chunks.empty());
      EXPECT_LT(s.max_error(p), 1e-5) << "R=" << R << " peer " << p;
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
    for (PeerId p : {9u, 10u, 11u})
      s.world.after((0.1 + 0.06 * static_cast<double>(seed - 7)) * tb0, [&, p] {
        s.world.set_down(p, silent ? MemoryWorld::Departure::Silent : MemoryWorld::Departure::Crash); });
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
