// RaftNode in small deterministic scenarios: election, replication, partitions, leader crash at
// every step of replication, loss/duplication/reordering, membership changes and replacement of
// lost replicas, snapshots, restarts, and hostile input.
#include "core/raft/node.h"

#include <gtest/gtest.h>

#include <string>

#include "cluster.h"
#include "core/raft/candidates.h"

namespace swarmlab::core::raft {
namespace {

using testing::Cluster;
using testing::ClusterOptions;
using testing::LinkFaults;

ClusterOptions options(std::size_t servers, std::uint64_t seed, std::size_t clients = 0) {
  ClusterOptions o;
  o.servers = servers;
  o.clients = clients;
  o.seed = seed;
  return o;
}

void expect_safe(Cluster& c) {
  EXPECT_TRUE(c.violations().empty()) << c.violations_text();
  std::string why;
  EXPECT_TRUE(c.linearizable(&why)) << why;
}

// "k<i>", built by appending: GCC 12 warns falsely about "k" + std::to_string(i) when inlined.
std::string raft_key(int i) { return std::string("k").append(std::to_string(i)); }

TEST(RaftNode, ElectsOneLeaderAndReplicates) {
  Cluster c(options(3, 1));
  const auto leader = c.run_until_leader(2.0);
  ASSERT_TRUE(leader);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(c.propose_put(raft_key(i), "v"));
  c.run_for(0.5);
  EXPECT_EQ(c.convergence(), "");
  for (PeerId p = 0; p < 3; ++p) {
    EXPECT_EQ(c.server(p).machine->data().size(), 20u);
    EXPECT_EQ(c.node(p)->term(), c.node(*leader)->term());
    if (p != *leader) {
      EXPECT_EQ(c.node(p)->role(), Role::Follower);
      EXPECT_EQ(c.node(p)->leader(), leader);
    }
  }
  // Followers refuse proposals.
  EXPECT_FALSE(c.node((*leader + 1) % 3)->propose({1}));
  expect_safe(c);
}

TEST(RaftNode, SingleMemberGroupCommitsAlone) {
  ClusterOptions o = options(2, 3, 1);
  o.members = {0};
  Cluster c(o);
  ASSERT_EQ(c.run_until_leader(1.0), 0u);
  c.client(0).run_workload(c.now() + 0.5);
  c.run_for(1.0);
  EXPECT_GT(c.client(0).completed(), 10u);
  EXPECT_EQ(c.node(1)->role(), Role::Follower);  // not a member: never campaigns
  EXPECT_EQ(c.node(1)->term(), 0u);
  expect_safe(c);
}

TEST(RaftNode, ClientsAreRedirectedToTheLeader) {
  Cluster c(options(5, 2, 3));
  ASSERT_TRUE(c.run_until_leader(2.0, 0.2));
  for (std::size_t i = 0; i < c.clients(); ++i) c.client(i).run_workload(c.now() + 1.0);
  c.run_for(1.5);
  EXPECT_GT(c.completed_ops(), 60u);
  EXPECT_EQ(c.convergence(), "");
  expect_safe(c);
}

TEST(RaftNode, MinorityLeaderCannotCommitAndStepsDown) {
  Cluster c(options(5, 4));
  const PeerId old = *c.run_until_leader(2.0, 0.3);
  const Term old_term = c.node(old)->term();
  ASSERT_TRUE(c.propose_put("before", "1"));
  c.run_for(0.2);
  // The leader and one follower on one side, three on the other.
  const PeerId buddy = (old + 1) % 5;
  std::vector<PeerId> majority;
  for (PeerId p = 0; p < 5; ++p)
    if (p != old && p != buddy) majority.push_back(p);
  c.net().partition({{old, buddy}, majority});
  const Index stuck = *c.node(old)->propose(encode_kv_command({KvOp::Put, 0, 0, "lost", "x", {}}));
  c.run_for(1.0);
  // The majority elected a new leader in a later term; the old one never committed its entry and
  // gave up leadership once it stopped hearing from a majority (check-quorum).
  std::optional<PeerId> fresh;
  for (PeerId p : majority)
    if (c.node(p)->is_leader()) fresh = p;
  ASSERT_TRUE(fresh);
  EXPECT_GT(c.node(*fresh)->term(), old_term);
  EXPECT_LT(c.node(old)->commit_index(), stuck);
  EXPECT_FALSE(c.node(old)->is_leader());
  ASSERT_TRUE(c.node(*fresh)->propose(encode_kv_command({KvOp::Put, 0, 0, "after", "2", {}})));
  c.run_for(0.3);
  c.net().heal();
  c.run_for(1.0);
  // The minority's uncommitted entry is gone everywhere; the majority's writes are everywhere.
  EXPECT_EQ(c.convergence(), "");
  for (PeerId p = 0; p < 5; ++p) {
    EXPECT_EQ(c.server(p).machine->data().count("lost"), 0u) << p;
    EXPECT_EQ(c.server(p).machine->data().count("after"), 1u) << p;
  }
  expect_safe(c);
}

TEST(RaftNode, PreVoteKeepsAPartitionedFollowerFromDisruptingTheGroup) {
  Cluster c(options(3, 5));
  const PeerId leader = *c.run_until_leader(2.0, 0.3);
  const Term term = c.node(leader)->term();
  const PeerId lonely = (leader + 1) % 3;
  c.net().partition({{lonely}, {leader, (leader + 2) % 3}});
  c.run_for(2.0);
  EXPECT_EQ(c.node(lonely)->term(), term);  // pre-votes failed: its term never rose
  EXPECT_EQ(c.node(lonely)->role(), Role::PreCandidate);
  c.net().heal();
  c.run_for(1.0);
  EXPECT_TRUE(c.node(leader)->is_leader());
  EXPECT_EQ(c.node(leader)->term(), term);
  EXPECT_EQ(c.node(lonely)->leader(), leader);
  expect_safe(c);
}

TEST(RaftNode, LeaderCrashAtEveryStepOfReplication) {
  // One client writes and reads; the leader crashes after k events (message deliveries and timers),
  // for every k through several complete operations: before the AppendEntries leave, after one or
  // both followers appended, after the commit, after the client's reply, and so on.
  int committed_before_crash = 0;
  for (int k = 0; k <= 120; ++k) {
    SCOPED_TRACE("crash after " + std::to_string(k) + " events");
    Cluster c(options(3, 100 + static_cast<std::uint64_t>(k), 1));
    const PeerId leader = *c.run_until_leader(2.0, 0.2);
    c.client(0).run_workload(c.now() + 0.05);
    for (int i = 0; i < k; ++i) c.net().step();
    const std::size_t committed = c.committed().size();
    c.crash(leader);
    c.run_for(1.5);
    c.restart(leader);
    c.run_for(1.5);
    if (c.committed().size() > committed) ++committed_before_crash;
    EXPECT_FALSE(c.client(0).busy());
    EXPECT_EQ(c.convergence(), "");
    expect_safe(c);
  }
  EXPECT_GT(committed_before_crash, 0);
}

// Steps the simulation until `done` holds (or `limit` seconds pass).
template <typename F>
bool step_until(Cluster& c, Seconds limit, F done) {
  const Seconds end = c.now() + limit;
  while (!done()) {
    if (c.now() > end || !c.net().step()) return false;
  }
  return true;
}

TEST(RaftNode, NeverCommitsAnEarlierTermsEntryByCountingReplicas) {
  // The Raft paper's Figure 8, with three servers L, M, X and one entry per AppendEntries:
  // (1) L, leader in term t, appends "old" at index i and crashes before sending it;
  // (2) M is elected in t+1, appends its no-op at i, and crashes before sending it;
  // (3) L returns, is elected with X's vote, and copies "old" to X: a majority holds it, but it is
  //     from an earlier term, so L must not commit it; L crashes before its own no-op reaches X;
  // (4) M returns and, with the more recent last term, is elected and overwrites index i on X.
  // Had L committed "old" in (3), a committed entry would now be lost.
  ClusterOptions o = options(3, 15);
  o.raft.max_entries_per_message = 1;
  Cluster c(o);
  const PeerId L = *c.run_until_leader(2.0, 0.3);
  const Term t = c.node(L)->term();
  c.net().isolate(L, {0, 1, 2});
  const Index i = *c.node(L)->propose(encode_kv_command({KvOp::Put, 0, 0, "old", "x", {}}));
  c.run_for(0.01);
  c.crash(L);
  c.net().heal();

  std::optional<PeerId> M;
  ASSERT_TRUE(step_until(c, 3.0, [&] {
    M = c.leader();
    return M.has_value();
  }));
  const PeerId X = 3 - L - *M;
  c.net().isolate(*M, {0, 1, 2});  // its no-op never leaves
  EXPECT_EQ(c.node(*M)->last_index(), i);
  EXPECT_EQ(c.node(*M)->term_at(i), t + 1);
  c.run_for(0.01);
  c.crash(*M);
  c.net().heal();

  c.restart(L);
  ASSERT_TRUE(step_until(c, 3.0, [&] { return c.node(L)->is_leader(); }));
  // Let "old" reach X and X's acknowledgement come back, but nothing more reach X.
  ASSERT_TRUE(step_until(c, 1.0, [&] { return c.node(X)->last_index() >= i; }));
  c.net().set_blocked_one_way(L, X, true);
  c.run_for(0.1);
  EXPECT_LT(c.node(L)->commit_index(), i) << "committed an entry of an earlier term by counting replicas";
  c.crash(L);
  c.net().heal();

  c.restart(*M);
  ASSERT_TRUE(step_until(c, 3.0, [&] { return c.node(*M)->is_leader(); }));
  c.run_for(0.5);
  EXPECT_EQ(c.node(X)->term_at(i), t + 1);  // M's entry won
  EXPECT_EQ(c.server(X).machine->data().count("old"), 0u);
  c.restart(L);
  c.run_for(1.0);
  EXPECT_EQ(c.convergence(), "");
  expect_safe(c);
}

TEST(RaftNode, AVoteSurvivesACrash) {
  // A node votes in term 5, crashes and restarts: it must not vote for another candidate in term 5.
  testing::MemoryWorld net(3, core::testing::PeerSpec{0, 0, 0}, 1);
  net.set_faults({});
  MemoryStorage storage(Configuration::of({0, 1, 2}));
  std::vector<RaftMessage> replies;
  net.on_send = [&](PeerId, PeerId, const Message& m) { replies.push_back(decode(m.bytes, WireLimits{})); };
  auto ask = [&](RaftNode& n, PeerId candidate, Term term) {
    RaftMessage req;
    req.kind = MessageKind::VoteRequest;
    req.term = term;
    replies.clear();
    n.receive(candidate, encode(req));
    for (const RaftMessage& r : replies)
      if (r.kind == MessageKind::VoteReply) return r.granted;
    return false;
  };
  {
    KvStateMachine machine;
    RaftNode node(net.env(0), RaftConfig{}, storage, machine);
    EXPECT_TRUE(ask(node, 1, 5));
    EXPECT_TRUE(ask(node, 1, 5));   // the same candidate again: yes
    EXPECT_FALSE(ask(node, 2, 5));  // another one: no
  }
  EXPECT_EQ(net.outstanding_timers(0), 0u);
  KvStateMachine machine;
  RaftNode node(net.env(0), RaftConfig{}, storage, machine);
  EXPECT_EQ(node.term(), 5u);
  EXPECT_FALSE(ask(node, 2, 5));
  EXPECT_TRUE(ask(node, 2, 6));  // a new term: a new vote
}

TEST(RaftNode, LossDuplicationAndReorderingKeepTheHistoryLinearizable) {
  ClusterOptions o = options(5, 6, 3);
  o.faults = {0.15, 0.1, 0.001, 0.03, false};  // 15% lost, 10% twice, 1–30 ms, reordered
  o.raft.snapshot_threshold = 32;
  Cluster c(o);
  ASSERT_TRUE(c.run_until_leader(5.0));
  for (std::size_t i = 0; i < c.clients(); ++i) c.client(i).run_workload(c.now() + 3.0);
  c.run_for(3.0);
  c.net().set_faults({});
  c.drain_clients(2.0);
  EXPECT_GT(c.completed_ops(), 30u);
  EXPECT_GT(c.net().stats().duplicated, 50u);
  EXPECT_EQ(c.convergence(), "");
  expect_safe(c);
}

TEST(RaftNode, LaggingFollowerCatchesUpWithInstallSnapshot) {
  ClusterOptions o = options(3, 7);
  o.raft.snapshot_threshold = 10;
  Cluster c(o);
  const PeerId leader = *c.run_until_leader(2.0, 0.3);
  const PeerId lagging = (leader + 1) % 3;
  c.crash(lagging);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(c.propose_put(raft_key(i % 7), std::to_string(i)));
    c.run_for(0.01);
  }
  c.run_for(0.2);
  EXPECT_GE(c.node(leader)->stats().compactions, 5u);
  EXPECT_GT(c.node(leader)->snapshot_index(), 50u);
  c.restart(lagging);
  c.run_for(1.0);
  EXPECT_GE(c.node(lagging)->stats().snapshots_installed, 1u);
  EXPECT_GE(c.node(leader)->stats().snapshots_sent, 1u);
  EXPECT_EQ(c.convergence(), "");
  expect_safe(c);
}

TEST(RaftNode, WholeGroupRestartsFromStorage) {
  ClusterOptions o = options(3, 8);
  o.raft.snapshot_threshold = 16;
  Cluster c(o);
  ASSERT_TRUE(c.run_until_leader(2.0, 0.3));
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(c.propose_put(raft_key(i), std::to_string(i)));
  c.run_for(0.5);
  ASSERT_EQ(c.convergence(), "");
  const auto data = c.server(0).machine->data();
  std::vector<Term> terms;
  for (PeerId p = 0; p < 3; ++p) {
    terms.push_back(c.node(p)->term());
    c.crash(p);
  }
  for (PeerId p = 0; p < 3; ++p) {
    c.restart(p);
    EXPECT_EQ(c.node(p)->term(), terms[p]);         // persistent
    EXPECT_EQ(c.node(p)->role(), Role::Follower);   // volatile
    EXPECT_EQ(c.node(p)->commit_index(), c.node(p)->snapshot_index());
  }
  ASSERT_TRUE(c.run_until_leader(c.now() + 2.0, 0.3));
  c.run_for(0.3);
  EXPECT_EQ(c.convergence(), "");
  EXPECT_EQ(c.server(0).machine->data(), data);
  expect_safe(c);
}

TEST(RaftNode, CrashCancelsEveryTimer) {
  Cluster c(options(3, 9));
  const PeerId leader = *c.run_until_leader(2.0, 0.3);
  EXPECT_GT(c.net().outstanding_timers(leader), 0u);
  c.crash(leader);  // records a violation if timers are left
  c.crash((leader + 1) % 3);
  EXPECT_EQ(c.net().outstanding_timers(leader), 0u);
  c.run_for(2.0);  // pending deliveries and timers fire into nothing
  c.restart(leader);
  c.restart((leader + 1) % 3);
  ASSERT_TRUE(c.run_until_leader(c.now() + 2.0));
  expect_safe(c);
}

TEST(RaftNode, MembershipChangesOneServerAtATime) {
  ClusterOptions o = options(5, 10);
  o.members = {0, 1, 2};
  Cluster c(o);
  const PeerId leader = *c.run_until_leader(2.0, 0.3);
  ASSERT_TRUE(c.node(leader)->can_change_membership());
  ASSERT_TRUE(c.node(leader)->add_member(3));
  // The next change waits for this one to commit.
  EXPECT_FALSE(c.node(leader)->add_member(4));
  EXPECT_FALSE(c.node(leader)->can_change_membership());
  EXPECT_EQ(c.node(leader)->config(), Configuration::of({0, 1, 2, 3}));  // in force when appended
  c.run_for(0.3);
  ASSERT_TRUE(c.node(leader)->add_member(4));
  c.run_for(0.3);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(c.propose_put(raft_key(i), "v"));
  c.run_for(0.3);
  EXPECT_EQ(c.convergence(), "");
  EXPECT_EQ(c.node(4)->config(), Configuration::of({0, 1, 2, 3, 4}));
  EXPECT_EQ(c.server(4).machine->data().size(), 10u);
  EXPECT_FALSE(c.node(leader)->add_member(4));     // already a member
  EXPECT_FALSE(c.node(leader)->remove_member(42));  // not a member

  // The leader removes itself: it leads until the change commits, then steps down, and the others
  // elect a leader among themselves.
  ASSERT_TRUE(c.node(leader)->remove_member(leader));
  c.run_for(1.0);
  EXPECT_FALSE(c.node(leader)->is_leader());
  const auto next = c.leader();
  ASSERT_TRUE(next);
  EXPECT_NE(*next, leader);
  EXPECT_FALSE(c.node(*next)->config().contains(leader));
  ASSERT_TRUE(c.propose_put("after", "x"));
  c.run_for(0.3);
  EXPECT_EQ(c.convergence(), "");
  c.run_for(2.0);  // the removed server stays quiet
  EXPECT_EQ(c.leader(), next);
  expect_safe(c);
}

TEST(RaftNode, RemovedServerCannotDisruptTheGroup) {
  Cluster c(options(4, 11));
  const PeerId leader = *c.run_until_leader(2.0, 0.3);
  const PeerId gone = (leader + 1) % 4;
  c.net().isolate(gone, {0, 1, 2, 3});
  ASSERT_TRUE(c.node(leader)->remove_member(gone));
  c.run_for(0.5);
  const Term term = c.node(leader)->term();
  c.net().heal();  // it never learnt of its removal, and campaigns
  c.run_for(2.0);
  EXPECT_EQ(c.leader(), leader);
  EXPECT_EQ(c.node(leader)->term(), term);
  expect_safe(c);
}

TEST(RaftNode, ReplacesLostReplicasWithTheNextClosestPeers) {
  // Eight peers with random ids; the group is the three closest to the group key, and a leader
  // replaces a silent replica with the closest peer not yet in the group.
  Rng rng(12);
  const dht::NodeId key = dht::NodeId::random(rng);
  std::vector<CandidatePeer> peers;
  for (PeerId p = 0; p < 8; ++p) peers.push_back({p, dht::NodeId::random(rng)});
  const std::vector<PeerId> order = order_by_closeness(key, peers);
  for (std::size_t i = 1; i < order.size(); ++i)
    EXPECT_LT(peers[order[i - 1]].id ^ key, peers[order[i]].id ^ key);

  ClusterOptions o = options(8, 12, 2);
  o.members = {order[0], order[1], order[2]};
  o.raft.target_size = 3;
  o.raft.replace_after = 0.5;
  o.raft.snapshot_threshold = 20;  // the newcomers catch up through snapshots
  Cluster c(o);
  for (PeerId p = 0; p < 8; ++p) c.node(p)->set_candidates(order);
  ASSERT_TRUE(c.run_until_leader(2.0, 0.3));
  for (std::size_t i = 0; i < c.clients(); ++i) c.client(i).run_workload(c.now() + 6.0);
  c.run_for(0.5);

  // Lose a follower for good: order[3] replaces it.
  PeerId victim = order[0] == *c.leader() ? order[1] : order[0];
  c.crash(victim);
  c.run_for(2.0);
  Configuration expected = Configuration::of({order[0], order[1], order[2]}).without(victim).with(order[3]);
  EXPECT_EQ(c.node(*c.leader())->config(), expected);
  EXPECT_GE(c.node(*c.leader())->stats().replicas_removed, 1u);
  EXPECT_GE(c.node(*c.leader())->stats().replicas_added, 1u);

  // Lose the leader: the others elect one and replace the old leader with order[4].
  const PeerId old_leader = *c.leader();
  c.crash(old_leader);
  c.run_for(2.5);
  ASSERT_TRUE(c.leader());
  expected = expected.without(old_leader).with(order[4]);
  EXPECT_EQ(c.node(*c.leader())->config(), expected);
  c.drain_clients(1.0);
  EXPECT_EQ(c.convergence(), "");
  EXPECT_GT(c.completed_ops(), 100u);
  EXPECT_GE(c.node(order[4])->stats().snapshots_installed, 1u);
  expect_safe(c);
}

TEST(RaftNode, ACandidateThatNeverAnswersIsPassedOver) {
  ClusterOptions o = options(6, 13);
  o.members = {0, 1, 2};
  o.raft.target_size = 3;
  o.raft.replace_after = 0.4;
  o.raft.catch_up_timeout = 0.8;
  Cluster c(o);
  for (PeerId p = 0; p < 6; ++p) c.node(p)->set_candidates({0, 1, 2, 3, 4, 5});
  const PeerId leader = *c.run_until_leader(2.0, 0.3);
  c.crash(3);  // the closest candidate is dead
  const PeerId victim = leader == 0 ? 1 : 0;
  c.crash(victim);
  c.run_for(3.0);
  EXPECT_EQ(c.node(*c.leader())->config(), Configuration::of({0, 1, 2}).without(victim).with(4));
  expect_safe(c);
}

TEST(RaftNode, MalformedAndHostileMessagesNeverCrashAPeer) {
  // A quick in-tree complement to the libFuzzer target: random bytes, and valid messages with
  // mutated bytes, from every peer to every node of a working group, which must keep working.
  ClusterOptions o = options(3, 14, 1);
  o.raft.snapshot_threshold = 8;
  Cluster c(o);
  ASSERT_TRUE(c.run_until_leader(2.0, 0.3));
  std::vector<std::vector<std::uint8_t>> seen;
  c.net().on_send = [&](PeerId, PeerId, const Message& m) {
    if (seen.size() < 400) seen.push_back(m.bytes);
  };
  c.client(0).run_workload(c.now() + 0.5);
  c.run_for(0.5);
  c.net().on_send = nullptr;
  ASSERT_FALSE(seen.empty());
  Rng rng(99);
  std::uint64_t accepted = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<std::uint8_t> b;
    if (i % 10 == 0) {
      b.resize(rng.below(40));
      for (auto& x : b) x = static_cast<std::uint8_t>(rng.below(256));
      if (!b.empty()) b[0] = static_cast<std::uint8_t>(ServiceId::Raft);
    } else {
      b = seen[rng.below(seen.size())];
      const int edits = 1 + static_cast<int>(rng.below(3));
      for (int e = 0; e < edits && !b.empty(); ++e) b[rng.below(b.size())] = static_cast<std::uint8_t>(rng.below(256));
    }
    const PeerId to = static_cast<PeerId>(rng.below(3));
    const PeerId from = static_cast<PeerId>(rng.below(4));
    if (c.node(to)->receive(from, b)) {
      ++accepted;
    } else {
      ++refused;
    }
    if (i % 500 == 0) c.run_for(0.05);
  }
  EXPECT_GT(accepted, 100u);
  EXPECT_GT(refused, 1000u);
  // Hostile input may legitimately confuse the group (a forged leader can make followers step
  // down), but every node is alive, and once the forgeries stop the group recovers.
  c.run_for(3.0);
  ASSERT_TRUE(c.run_until_leader(c.now() + 5.0, 0.3));
}

}  // namespace
}  // namespace swarmlab::core::raft
