#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <set>
#include <string>

#include "core/matchmaking/group_key.h"
#include "core/service_ids.h"
#include "matchmaker_fixture.h"

namespace swarmlab::core::matchmaking {
namespace {

using testing::MatchSwarm;

std::string binary(std::uint64_t v, int width) { return next_bits(std::string(width, '0'), v, width); }

// Checks one round: each peer got at most one result; groups are consistent across their members
// (same id, same order, same leader) and within [min, target]. Returns group id → members.
std::map<std::uint64_t, std::vector<PeerId>> check_round(const MatchSwarm& s, std::size_t round, std::size_t min_size,
                                                          std::size_t target) {
  std::map<std::uint64_t, Group> groups;
  std::map<PeerId, std::uint64_t> group_of;
  for (PeerId p = 0; p < s.results.size(); ++p) {
    if (s.results[p].size() <= round || !s.results[p][round].group) continue;
    const Group& g = *s.results[p][round].group;
    EXPECT_TRUE(g.index_of(p)) << "peer " << p << " got a group without it";
    auto [it, fresh] = groups.emplace(g.group_id, g);
    if (!fresh) EXPECT_EQ(it->second, g) << "members of group " << g.group_id << " disagree";
    group_of[p] = g.group_id;
  }
  std::map<std::uint64_t, std::vector<PeerId>> out;
  for (const auto& [id, g] : groups) {
    EXPECT_GE(g.size(), min_size);
    EXPECT_LE(g.size(), target);
    for (const auto& m : g.members) {
      // Every listed member received this very group: nobody is in two groups.
      EXPECT_EQ(group_of.count(m.peer), 1u) << "peer " << m.peer << " listed in group " << id << " but got none";
      if (group_of.count(m.peer)) EXPECT_EQ(group_of[m.peer], id) << "peer " << m.peer << " in two groups";
    }
    out[id] = g.peers();
  }
  return out;
}

// 64 peers on a 8×8 grid: bits 3, groups of 8. Round 1 groups the peers sharing bits; the shift
// register then sends exactly one member of each group to each key, so every round-2 group draws
// its members from 8 different round-1 groups.
TEST(Matchmaker, SixtyFourPeersFormGridGroupsAndMix) {
  MatchSwarm s(64, [](PeerId p) {
    MatchmakingConfig c;
    c.initial_bits = binary(p % 8, 3);
    c.target_group_size = 8;
    return c;
  });
  const Seconds t0 = s.now();
  for (PeerId p = 0; p < 64; ++p) s.look_at(t0 + 0.01 * p, p, 30);
  s.run_for(15);
  const auto round1 = check_round(s, 0, 2, 8);
  std::size_t matched = 0;
  for (const auto& [id, members] : round1) matched += members.size();
  EXPECT_EQ(matched, 64u);
  EXPECT_EQ(round1.size(), 8u);
  std::map<PeerId, std::uint64_t> first_group;
  for (const auto& [id, members] : round1)
    for (PeerId p : members) first_group[p] = id;
  for (PeerId p = 0; p < 64; ++p) {
    ASSERT_EQ(s.results[p].size(), 1u);
    EXPECT_LE(s.results[p][0].at - t0, 6.5) << "a full group begins at once, a partial one by the leader's expiration";
  }

  const Seconds t1 = s.now();
  for (PeerId p = 0; p < 64; ++p) s.look_at(t1 + 0.01 * p, p, 30);
  s.run_for(15);
  const auto round2 = check_round(s, 1, 2, 8);
  matched = 0;
  for (const auto& [id, members] : round2) {
    matched += members.size();
    std::set<std::uint64_t> origins;
    for (PeerId p : members) origins.insert(first_group[p]);
    EXPECT_EQ(origins.size(), members.size()) << "round-2 group with two members of one round-1 group";
  }
  EXPECT_EQ(matched, 64u);
}

// All 64 peers under one key: leaders emerge by (expiration, id) and groups respect the sizes.
class SixtyFourPeers : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(SixtyFourPeers, OnOneKeyRespectGroupSizes) {
  MatchSwarm s(64, [](PeerId) {
    MatchmakingConfig c;
    c.target_group_size = 8;
    c.min_group_size = 3;
    return c;
  }, GetParam());
  const Seconds t0 = s.now();
  for (PeerId p = 0; p < 64; ++p) s.look_at(t0 + 0.003 * ((p * 37) % 64), p, 20);
  s.run_for(25);
  const auto groups = check_round(s, 0, 3, 8);
  std::size_t matched = 0;
  for (const auto& [id, members] : groups) matched += members.size();
  for (PeerId p = 0; p < 64; ++p) EXPECT_EQ(s.results[p].size(), 1u) << "peer " << p;
  EXPECT_GE(matched, 56u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SixtyFourPeers, ::testing::Values(1, 2, 3));

// The leader of a forming group disappears. Its followers notice (at once when the connection
// breaks; otherwise when their wait for "begin" runs out at the leader's expiration +
// request_timeout) and regroup among themselves within one more min_matchmaking_time.
void leader_dies(core::testing::MemoryWorld::Departure how, Seconds bound) {
  MatchSwarm s(6, [](PeerId) {
    MatchmakingConfig c;
    c.target_group_size = 8;  // never full: the leader waits for its expiration
    return c;
  });
  const Seconds t0 = s.now();
  const PeerId order[] = {3, 1, 4, 0, 5, 2};  // 3 declares first: it leads
  for (int k = 0; k < 6; ++k) s.look_at(t0 + 0.05 * k, order[k]);
  s.run_for(2.0);
  EXPECT_EQ(s.mm[1]->stats().join_requests_sent, 1u);
  s.world->set_down(3, how);
  s.run_for(bound + 1);
  std::set<PeerId> grouped;
  for (PeerId p : {0, 1, 2, 4, 5}) {
    ASSERT_EQ(s.results[p].size(), 1u) << "peer " << p;
    ASSERT_TRUE(s.results[p][0].group) << "peer " << p;
    EXPECT_LE(s.results[p][0].at - t0, bound) << "peer " << p;
    EXPECT_FALSE(s.results[p][0].group->index_of(3));
    for (PeerId q : s.results[p][0].group->peers()) grouped.insert(q);
  }
  EXPECT_EQ(grouped, (std::set<PeerId>{0, 1, 2, 4, 5}));
  check_round(s, 0, 2, 8);
}

TEST(Matchmaker, FollowersRegroupWhenTheLeaderVanishes) {
  // Leader's expiration t0+5, + request_timeout 3 + the leader's possible extension 3 (a follower
  // cannot know whether it will hold the group open), + a new declaration of 5, + lookups.
  leader_dies(core::testing::MemoryWorld::Departure::Silent, 5 + 3 + 3 + 5 + 1);
}

TEST(Matchmaker, FollowersRegroupAtOnceWhenTheLeaderCrashes) {
  // Crash at t0+2 is reported: a new declaration of 5 from there, + lookups.
  leader_dies(core::testing::MemoryWorld::Departure::Crash, 2 + 5 + 1);
}

// Twelve peers start looking at the same instant. Each reads the declarations only once its own is
// stored (core/matchmaking/README.md), so no read comes back empty and walks the whole DHT: every
// read stops after the replicas' answers. Before, each first read found nobody and asked all
// eleven other nodes.
TEST(Matchmaker, TheFirstReadWaitsForOurOwnDeclaration) {
  constexpr std::size_t kPeers = 12;
  MatchSwarm s(kPeers, [](PeerId) {
    MatchmakingConfig c;
    c.target_group_size = kPeers;
    return c;
  });
  struct Sent {
    PeerId from;
    dht::MessageKind kind;
  };
  std::vector<Sent> sent;
  s.world->on_send = [&](PeerId from, PeerId, const Message& m) {
    if (m.bytes.size() > 1 && m.bytes[0] == static_cast<std::uint8_t>(ServiceId::Dht))
      sent.push_back({from, static_cast<dht::MessageKind>(m.bytes[1])});
  };
  for (PeerId p = 0; p < kPeers; ++p) s.look(p, 20);
  s.run_for(10);
  const auto groups = check_round(s, 0, 1, kPeers);
  ASSERT_EQ(groups.size(), 1u);
  for (PeerId p = 0; p < kPeers; ++p) {
    std::size_t reads = 0, stores_before_first_read = 0;
    bool read = false;
    for (const Sent& m : sent) {
      if (m.from != p) continue;
      if (m.kind == dht::MessageKind::FindValueRequest) {
        ++reads;
        read = true;
      }
      if (m.kind == dht::MessageKind::StoreRequest && !read) ++stores_before_first_read;
    }
    EXPECT_GE(stores_before_first_read, 1u) << "peer " << p;
    // α requests per read at most, and a peer reads a few times while its group forms.
    EXPECT_LE(reads, 3 * dht::DhtConfig{}.parallelism) << "peer " << p;
  }
}

// Live mode's clock moves while a handler runs. A step due a few reads after look_for_group()
// begins is ahead at one read of the declaration and past at the next: its timer is a deadline,
// never `due - now()` against the later read (before, some of these offsets threw).
TEST(Matchmaker, AStepDueWhileTheDeclarationIsMadeOnAClockThatMovesWithinHandlers) {
  constexpr Seconds kStep = 1e-3;
  for (double reads = 0.5; reads <= 8.0; reads += 0.25) {
    SCOPED_TRACE("the step is due " + std::to_string(reads) + " clock reads after the search begins");
    MatchSwarm s(2, [](PeerId) { return MatchmakingConfig{}; }, 1, kStep);
    for (PeerId p = 0; p < 2; ++p) {
      s.world->after(1.0, [&s, p, reads] {
        const Seconds due = s.env(p).now() + reads * kStep;
        s.mm[p]->look_for_group([&s, p](std::optional<Group> g) { s.results[p].push_back({std::move(g), s.now()}); },
                                std::numeric_limits<double>::infinity(), due);
      });
    }
    ASSERT_NO_THROW(s.run_for(30));
    const auto groups = check_round(s, 0, 2, 2);
    EXPECT_EQ(groups.size(), 1u);
  }
}

TEST(Matchmaker, ClientModePeersJoinButNeverLead) {
  MatchSwarm s(5, [](PeerId p) {
    MatchmakingConfig c;
    c.target_group_size = 5;
    c.client_mode = p < 3;
    return c;
  });
  for (PeerId p = 0; p < 5; ++p) s.look(p, 20);
  s.run_for(10);
  const auto groups = check_round(s, 0, 2, 5);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups.begin()->second.size(), 5u);
  const Group& g = *s.results[0][0].group;
  EXPECT_GE(g.leader, 3u);
  for (const auto& m : g.members) EXPECT_EQ(m.client_mode, m.peer < 3);

  // Clients alone never form a group.
  MatchSwarm clients(3, [](PeerId) {
    MatchmakingConfig c;
    c.client_mode = true;
    return c;
  });
  for (PeerId p = 0; p < 3; ++p) clients.look(p, 8);
  clients.run_for(10);
  for (PeerId p = 0; p < 3; ++p) {
    ASSERT_EQ(clients.results[p].size(), 1u);
    EXPECT_FALSE(clients.results[p][0].group);
  }
}

// Every peer of `peers` got exactly one group, of `size` members, no earlier than `not_before`.
void expect_one_group_each(const MatchSwarm& s, std::initializer_list<PeerId> peers, std::size_t size,
                           Seconds not_before) {
  for (PeerId p : peers) {
    ASSERT_EQ(s.results[p].size(), 1u) << p;
    ASSERT_TRUE(s.results[p][0].group) << p;
    EXPECT_EQ(s.results[p][0].group->size(), size) << p;
    EXPECT_GE(s.results[p][0].at, not_before) << p;
  }
}

// docs/interpretations.md §30: reducers that finished a round first found a group of their own at
// their expiration, with no gradient in it, and missed the round of those with gradients. A leader
// whose group has nothing to average declares again instead of beginning it.
TEST(Matchmaker, AGroupWithNothingToAverageWaitsForAMemberThatHasSomething) {
  constexpr std::uint8_t kReducer = 0, kComputes = 1;
  MatchSwarm s(4, [](PeerId) {
    MatchmakingConfig c;
    c.target_group_size = 4;
    c.worth_averaging = [](std::span<const Attachment> members) {
      return std::ranges::any_of(members, [](const Attachment& a) { return a.bytes()[0] == kComputes; });
    };
    return c;
  });
  for (PeerId p = 0; p < 4; ++p) s.mm[p]->set_gathered(Attachment{p == 3 ? kComputes : kReducer});
  for (PeerId p = 0; p < 3; ++p) s.look(p, 60);
  s.look_at(20, 3, 60);  // long after the reducers' first declarations expired (5 s)
  s.run_for(40);
  expect_one_group_each(s, {0, 1, 2, 3}, 4, 20.0);
}

// docs/interpretations.md §32: a follower that crashes (its connection breaks) is told to the
// caller (member_gone), which stops expecting it, as the DHT coordinator does; the leader then
// begins as soon as the others are in. Before, it held its group open for the dead peer until its
// expiration and the extension (t0 + 8 s).
TEST(Matchmaker, ALeaderStopsWaitingForAFollowerThatCrashed) {
  std::vector<PeerId> gone;
  MatchSwarm* swarm = nullptr;
  MatchSwarm s(4, [&](PeerId p) {
    MatchmakingConfig c;
    c.target_group_size = 8;  // never full
    c.member_gone = [&, p](PeerId peer) {
      gone.push_back(peer);
      swarm->mm[p]->set_expected_group_size(3);
    };
    return c;
  });
  swarm = &s;
  for (PeerId p = 0; p < 4; ++p) s.mm[p]->set_expected_group_size(4);
  const Seconds t0 = s.now();
  const PeerId order[] = {3, 0, 1, 2};  // 3 declares first: it leads
  for (int k = 0; k < 4; ++k) s.look_at(t0 + 0.05 * k, order[k]);
  s.run_for(2.0);
  ASSERT_EQ(s.mm[2]->stats().replies_received.count(JoinStatus::Accepted), 1u);
  s.world->set_down(2, core::testing::MemoryWorld::Departure::Crash);
  s.run_for(10);
  EXPECT_EQ(gone, std::vector<PeerId>{2});  // only the leader exchanged messages with it
  for (PeerId p : {0, 1, 3}) {
    ASSERT_EQ(s.results[p].size(), 1u) << p;
    ASSERT_TRUE(s.results[p][0].group) << p;
    EXPECT_EQ(s.results[p][0].group->size(), 3u) << p;
    EXPECT_LT(s.results[p][0].at - t0, 3.0) << p;  // at the crash (2 s), not at 8 s
  }
}

// docs/interpretations.md §32: a leader whose group holds at most half of the members it expects
// does not begin at its expiration; it declares again. Two of six expected peers look at once, the
// other four 20 s later: one group of six, where before the two began a group of their own at 8 s
// and would have taken the step for a minority.
TEST(Matchmaker, ALeaderWithAMinorityOfTheExpectedMembersWaitsForTheRest) {
  MatchSwarm s(6, [](PeerId) {
    MatchmakingConfig c;
    c.target_group_size = 8;
    return c;
  });
  for (PeerId p = 0; p < 6; ++p) s.mm[p]->set_expected_group_size(6);
  for (PeerId p = 0; p < 2; ++p) s.look(p, 60);
  for (PeerId p = 2; p < 6; ++p) s.look_at(20, p, 60);
  s.run_for(40);
  expect_one_group_each(s, {0, 1, 2, 3, 4, 5}, 6, 20.0);
}

TEST(Matchmaker, GivesUpAfterTheTimeoutWhenAlone) {
  MatchSwarm s(3, [](PeerId p) {
    MatchmakingConfig c;
    c.initial_bits = p == 0 ? "0" : "1";
    return c;
  });
  s.look(0, 12);
  s.run_for(14);
  ASSERT_EQ(s.results[0].size(), 1u);
  EXPECT_FALSE(s.results[0][0].group);
  EXPECT_FALSE(s.mm[0]->looking());
  EXPECT_THROW(
      {
        s.look(1);
        s.look(1);
      },
      std::logic_error);
}

TEST(Matchmaker, CancelledFollowerLeavesItsLeader) {
  MatchSwarm s(3, [](PeerId) {
    MatchmakingConfig c;
    c.target_group_size = 3;
    return c;
  });
  s.look(0);
  s.run_for(0.5);
  s.look(1);
  s.run_for(1.5);
  ASSERT_EQ(s.mm[1]->stats().replies_received.at(JoinStatus::Accepted), 1u);
  s.mm[1]->cancel();
  ASSERT_EQ(s.results[1].size(), 1u);
  EXPECT_FALSE(s.results[1][0].group);
  EXPECT_FALSE(s.mm[1]->looking());
  s.look(2);
  s.run_for(6);
  ASSERT_EQ(s.results[0].size(), 1u);
  ASSERT_TRUE(s.results[0][0].group);
  EXPECT_EQ(s.results[0][0].group->peers().size(), 2u);
  EXPECT_FALSE(s.results[0][0].group->index_of(1));
}

TEST(Matchmaker, MalformedMessagesAreDroppedHarmlessly) {
  MatchSwarm s(3, [](PeerId) { return MatchmakingConfig{}; });
  s.look(0);
  for (std::vector<std::uint8_t> junk : {std::vector<std::uint8_t>{3}, {3, 1}, {3, 9, 0}, {3, 3, 0, 1, 2}, {3, 1, 0, 0xFF}}) {
    s.env(2).send(0, Message{junk, 0});
  }
  s.run_for(0.5);
  EXPECT_EQ(s.mm[0]->stats().malformed, 5u);
  s.look(1);
  s.run_for(7);
  ASSERT_EQ(s.results[0].size(), 1u);
  ASSERT_TRUE(s.results[0][0].group);
  EXPECT_EQ(s.results[0][0].group->size(), 2u);
}

}  // namespace
}  // namespace swarmlab::core::matchmaking
