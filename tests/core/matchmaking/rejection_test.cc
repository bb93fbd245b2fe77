// One test per reason a leader refuses a join request (docs/dedloc.md §3). A probe peer speaks the
// wire protocol by hand and records the replies.
#include <gtest/gtest.h>

#include <vector>

#include "core/matchmaking/declaration.h"
#include "core/matchmaking/group_key.h"
#include "matchmaker_fixture.h"

namespace swarmlab::core::matchmaking {
namespace {

using testing::MatchSwarm;

constexpr PeerId kLeader = 0;

class Rejections : public ::testing::Test {
 protected:
  // Peers 0 and 1 run matchmakers (target 3, schema 42, bits "0"); 2 and 3 are probes.
  void SetUp() override { build(3); }

  void build(std::size_t target, bool client_leader = false) {
    s = std::make_unique<MatchSwarm>(4, [target, client_leader](PeerId p) {
      MatchmakingConfig c;
      c.initial_bits.assign(1, '0');  // (a literal here trips GCC 12's -Wstringop-overflow)
      c.schema_hash = 42;
      c.target_group_size = target;
      c.client_mode = client_leader && p == kLeader;
      return c;
    });
    // Probes keep their DHT node; their matchmaking messages go to a recorder instead.
    probe_muxes.clear();
    for (PeerId probe : {2u, 3u}) {
      probes[probe].received = &received[probe];
      probe_muxes[probe].add(ServiceId::Dht, *s->nodes[probe]);
      probe_muxes[probe].add(ServiceId::Matchmaking, probes[probe]);
      s->env(probe).set_sink(&probe_muxes[probe]);
    }
  }

  // Records what a probe peer receives.
  struct ProbeService final : Service {
    std::vector<std::pair<PeerId, MatchmakingMessage>>* received = nullptr;
    void handle(PeerId from, const Message& m) override { received->push_back({from, decode(m.bytes)}); }
    void on_link_failure(PeerId) override {}
  };
  std::map<PeerId, ProbeService> probes;
  std::map<PeerId, ServiceMux> probe_muxes;

  MatchmakingMessage request(std::uint64_t id, std::uint64_t schema = 42, std::string key = group_key("averaging", "0")) {
    MatchmakingMessage m = make_message(MessageKind::JoinRequest, id);
    m.schema_hash = schema;
    m.group_key = std::move(key);
    m.expiration = s->now() + 10;
    return m;
  }
  void send(PeerId probe, PeerId to, const MatchmakingMessage& m) {
    s->env(probe).send(to, Message{encode(m), 0});
    s->run_for(0.3);
  }
  // The last message the probe received.
  const MatchmakingMessage& last(PeerId probe) {
    EXPECT_FALSE(received[probe].empty());
    return received[probe].back().second;
  }

  std::unique_ptr<MatchSwarm> s;
  std::map<PeerId, std::vector<std::pair<PeerId, MatchmakingMessage>>> received;
};

TEST_F(Rejections, NotLookingForGroup) {
  send(2, kLeader, request(1));
  EXPECT_EQ(last(2).kind, MessageKind::JoinReply);
  EXPECT_EQ(last(2).request_id, 1u);
  EXPECT_EQ(last(2).status, JoinStatus::NotLookingForGroup);
}

TEST_F(Rejections, BadSchemaHash) {
  s->look(kLeader);
  send(2, kLeader, request(1, 7));
  EXPECT_EQ(last(2).status, JoinStatus::BadSchemaHash);
}

TEST_F(Rejections, BadGroupKey) {
  s->look(kLeader);
  send(2, kLeader, request(1, 42, group_key("averaging", "1")));
  EXPECT_EQ(last(2).status, JoinStatus::BadGroupKey);
}

TEST_F(Rejections, NotALeaderWhileFollowingSuggestsItsLeader) {
  s->look(1);
  s->run_for(0.5);
  s->look(kLeader);  // declares later than 1, so it asks 1 to lead it
  s->run_for(2);
  EXPECT_EQ(s->mm[kLeader]->stats().replies_received.at(JoinStatus::Accepted), 1u);
  send(2, kLeader, request(1));
  EXPECT_EQ(last(2).status, JoinStatus::NotALeader);
  ASSERT_TRUE(last(2).suggested_leader);
  EXPECT_EQ(*last(2).suggested_leader, 1u);
}

TEST_F(Rejections, NotALeaderInClientMode) {
  build(3, true);
  s->look(kLeader);
  send(2, kLeader, request(1));
  EXPECT_EQ(last(2).status, JoinStatus::NotALeader);
  EXPECT_FALSE(last(2).suggested_leader);
}

TEST_F(Rejections, DuplicatePeerId) {
  s->look(kLeader);
  send(2, kLeader, request(1));
  EXPECT_EQ(last(2).status, JoinStatus::Accepted);
  send(2, kLeader, request(2));
  EXPECT_EQ(last(2).status, JoinStatus::DuplicatePeerId);
}

// A requester whose declaration comes before the leader's should lead it, not follow: after a
// leader died, its followers declared anew at once and, reading one another's old declarations,
// asked each other.
TEST_F(Rejections, DeclaredLater) {
  s->look(kLeader);  // declares until now + 5 (min_matchmaking_time)
  MatchmakingMessage m = request(1);
  m.expiration = s->now() + 1;
  send(2, kLeader, m);
  EXPECT_EQ(last(2).status, JoinStatus::DeclaredLater);
  m = request(2);  // now + 10: later than the leader
  send(2, kLeader, m);
  EXPECT_EQ(last(2).status, JoinStatus::Accepted);
}

// A leader whose group is full begins at once, unless its own join request to an earlier peer is
// still unanswered (it could be accepted there): until that is settled, its group is full.
TEST_F(Rejections, GroupFull) {
  build(2);
  // Probe 2 declares itself earlier than the leader will, and never answers join requests.
  s->nodes[2]->store(group_key("averaging", "0"), peer_subkey(2), encode_declaration({s->now() + 4, true}),
                     s->now() + 4, [](const dht::StoreResult&) {});
  s->run_for(1);
  s->look(kLeader);
  s->run_for(1);
  ASSERT_FALSE(received[2].empty());
  EXPECT_EQ(received[2].back().second.kind, MessageKind::JoinRequest);
  send(3, kLeader, request(1));
  EXPECT_EQ(last(3).status, JoinStatus::Accepted);  // the group is now full (target 2)
  send(2, kLeader, request(1));
  EXPECT_EQ(last(2).status, JoinStatus::GroupFull);
  // The leader's request times out; it leaves the silent peer and begins with the probe.
  s->run_for(3);
  EXPECT_EQ(received[2].back().second.kind, MessageKind::Leave);
  EXPECT_EQ(last(3).kind, MessageKind::Begin);
  EXPECT_EQ(last(3).members.size(), 2u);
  ASSERT_EQ(s->results[kLeader].size(), 1u);
  ASSERT_TRUE(s->results[kLeader][0].group);
  EXPECT_EQ(s->results[kLeader][0].group->leader, kLeader);
}

}  // namespace
}  // namespace swarmlab::core::matchmaking
