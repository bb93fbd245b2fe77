// Tracker groups on the memory world with loss, duplication and reordering (tracker_world.h): a
// committed metadata update survives the loss of a minority of replicas (the leader included) and
// the group grows back on the next-closest peers; after the loss of the whole group, the creator's
// snapshot reboots it on other peers, with exactly the updates the snapshot holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "core/dht/sha256.h"
#include "core/tracker/group.h"
#include "core/tracker/replica.h"
#include "tracker_world.h"

namespace swarmlab::core::tracker {
namespace {

using testing::TrackerWorld;
using testing::TrackerWorldOptions;

// The client's updates: create the dataset, then AddFile f<i> and RecordContribution(i, f<i>)
// alternately, one at a time. Remembers what each acknowledged seq wrote and when.
class Workload {
 public:
  struct Update {
    std::uint64_t seq;
    TrackerCommand command;
    Seconds acked_at;
  };

  Workload(TrackerWorld& world, std::size_t updates) : world_(world), remaining_(updates) {}

  void start() { next(); }
  void stop() { remaining_ = 0; }
  bool done() const { return remaining_ == 0 && !world_.client().busy(); }
  const std::vector<Update>& acked() const { return acked_; }
  std::size_t wrong_status() const { return wrong_status_; }
  // The command behind every seq submitted.
  const std::map<std::uint64_t, TrackerCommand>& submitted() const { return submitted_; }

 private:
  void next() {
    if (remaining_ == 0) return;
    --remaining_;
    TrackerCommand c;
    if (count_ == 0) {
      c.op = TrackerOp::CreateDataset;
      c.text = "fashion-mnist";
      c.peer = world_.client_peer();  // in its own name: the tracker authorizes by sender
    } else if (count_ % 2 == 1) {
      c.op = TrackerOp::AddFile;
      c.text = "f" + std::to_string(count_);
      c.size = 1000 + count_;
    } else {
      c.op = TrackerOp::RecordContribution;
      c.text = "f" + std::to_string(count_ - 1);
      c.peer = static_cast<PeerId>(count_);
    }
    ++count_;
    const std::uint64_t seq = world_.client().submit(c, [this, c](std::uint64_t s, const std::optional<TrackerResult>& r) {
      if (!r) return;
      // Exactly once: a retried update must get its first execution's Ok, never AlreadyExists.
      if (r->status != TrackerStatus::Ok) ++wrong_status_;
      acked_.push_back({s, c, world_.now()});
      next();
    });
    submitted_[seq] = c;
  }

  TrackerWorld& world_;
  std::size_t remaining_;
  std::size_t count_ = 0;
  std::vector<Update> acked_;
  std::map<std::uint64_t, TrackerCommand> submitted_;
  std::size_t wrong_status_ = 0;
};

bool holds(const DatasetInfo& info, const TrackerCommand& c) {
  switch (c.op) {
    case TrackerOp::CreateDataset:
      return info.created && info.title == c.text;
    case TrackerOp::AddFile: {
      auto it = info.files.find(c.text);
      return it != info.files.end() && it->second == c.size;
    }
    case TrackerOp::RecordContribution: {
      auto it = info.contributors.find(c.peer);
      return it != info.contributors.end() && it->second.count(c.text);
    }
    default:
      return false;
  }
}

// Reads the metadata through the group (a linearizable Query) with the world's client.
std::optional<DatasetInfo> query(TrackerWorld& w, Seconds deadline) {
  std::optional<DatasetInfo> out;
  bool answered = false;
  TrackerCommand q;
  q.op = TrackerOp::Query;
  w.client().submit(q, [&](std::uint64_t, const std::optional<TrackerResult>& r) {
    answered = true;
    if (r && r->status == TrackerStatus::Ok) out = r->info;
  });
  while (!answered && w.now() < deadline) w.net().run_for(0.01);
  return out;
}

TEST(TrackerGroup, KeyIsTheTitlesSha256OnTheDhtIdsAndMembersAreTheClosestPeers) {
  const dht::Sha256Digest d = dht::sha256("fashion-mnist");
  const dht::IdBytes key_bytes = dataset_key("fashion-mnist").to_bytes(dht::kHydraIdBits);
  EXPECT_TRUE(std::equal(d.begin(), d.end(), key_bytes.view().begin(), key_bytes.view().end()));
  const dht::NodeId key = dataset_key("fashion-mnist");
  EXPECT_NE(tracker_group_id(key, 0), tracker_group_id(key, 1));
  EXPECT_NE(tracker_group_id(key, 0), tracker_group_id(dataset_key("cifar-10"), 0));

  Rng rng(4, 4);
  std::vector<raft::CandidatePeer> peers;
  for (PeerId p = 0; p < 20; ++p) peers.push_back({p, dht::NodeId::random(rng, dht::kHydraIdBits)});
  const std::vector<PeerId> order = tracker_candidates("fashion-mnist", peers);
  ASSERT_EQ(order.size(), 20u);
  for (std::size_t i = 1; i < order.size(); ++i)
    EXPECT_LT(peers[order[i - 1]].id ^ key, peers[order[i]].id ^ key);
  EXPECT_EQ(founding_members(order, 3), (std::vector<PeerId>{order[0], order[1], order[2]}));
  TrackerGroupOptions o;
  o.replicas = 5;
  const raft::RaftConfig cfg = tracker_raft_config("fashion-mnist", o);
  EXPECT_EQ(cfg.target_size, 5u);
  EXPECT_EQ(cfg.group, tracker_group_id(key, 0));
}

TEST(TrackerGroup, HostRoutesByGroupAndDropsWhatItDoesNotServe) {
  core::testing::MemoryWorld net(2, core::testing::PeerSpec{0, 0, 0}, 1);
  TrackerHost host(net.env(0));
  raft::RaftConfig a, b;
  a.group = 11;
  b.group = 12;
  host.host(a, raft::MemoryStorage(raft::Configuration::of({0})), {0});
  host.host(b, raft::MemoryStorage(raft::Configuration::of({0})), {0});
  net.run_for(1.0);  // each single-member group elects itself
  ASSERT_TRUE(host.replica(11)->node()->is_leader());
  raft::RaftMessage m;
  m.kind = raft::MessageKind::VoteRequest;
  m.group = 12;
  m.term = 1;
  const auto received = host.replica(12)->node()->stats().messages_received;
  host.handle(1, Message{raft::encode(m), 0});
  EXPECT_EQ(host.replica(12)->node()->stats().messages_received, received + 1);
  m.group = 13;
  host.handle(1, Message{raft::encode(m), 0});
  host.handle(1, Message{{6}, 0});
  host.handle(1, Message{{}, 0});
  EXPECT_EQ(host.dropped(), 3u);
  const auto header = peek_raft_header(raft::encode(m));
  ASSERT_TRUE(header);
  EXPECT_EQ(header->group, 13u);
  const std::size_t timers = net.outstanding_timers(0);
  host.drop(11);
  EXPECT_EQ(host.replica(11), nullptr);
  EXPECT_LT(net.outstanding_timers(0), timers);  // group 11's timers went with it
  EXPECT_GT(net.outstanding_timers(0), 0u);      // group 12's did not
}

// Loses `lose` of the group's `replicas` (the leader among them) while the client writes, then
// checks that every acknowledged update is present once the group has grown back.
void survives_minority_loss(std::size_t replicas, std::size_t lose, std::uint64_t seed, std::uint64_t* ops) {
  TrackerWorldOptions o;
  o.replicas = replicas;
  o.hosts = replicas + 6;
  o.seed = seed;
  TrackerWorld w(o);
  ASSERT_TRUE(w.run_until_leader(5.0)) << "seed " << seed;
  Workload work(w, 120);  // about 10 ms each: the loss falls in the middle of it
  work.start();
  Rng rng(seed, 77);
  w.net().run_for(0.05 + 0.4 * rng.uniform());

  // The leader and lose - 1 other members vanish at once, with their storage.
  const PeerId leader = *w.leader();
  std::vector<PeerId> members = w.replica(leader)->node()->config().members;
  members.erase(std::remove(members.begin(), members.end(), leader), members.end());
  std::vector<PeerId> victims{leader};
  while (victims.size() < lose) {
    const std::size_t i = rng.below(members.size());
    victims.push_back(members[i]);
    members.erase(members.begin() + static_cast<std::ptrdiff_t>(i));
  }
  const std::size_t acked_before = work.acked().size();
  for (PeerId v : victims) w.lose(v);

  const Seconds deadline = w.now() + 60;
  while (!work.done() && w.now() < deadline) w.net().run_for(0.05);
  ASSERT_TRUE(work.done()) << "seed " << seed << ": the client's updates did not all complete";
  ASSERT_TRUE(w.run_until_settled(w.now() + 30)) << "seed " << seed << ": the group did not grow back";
  EXPECT_EQ(w.violations(), "") << "seed " << seed;
  EXPECT_EQ(work.wrong_status(), 0u) << "seed " << seed << ": an update was executed twice";
  EXPECT_GT(work.acked().size(), acked_before);

  // The new members are live, next-closest peers; none of the lost ones is back.
  const raft::RaftNode& lead = *w.replica(*w.leader())->node();
  for (PeerId v : victims) EXPECT_FALSE(lead.config().contains(v)) << "seed " << seed;
  std::vector<PeerId> expected;
  for (PeerId c : w.candidates())
    if (!w.lost().count(c) && expected.size() < replicas) expected.push_back(c);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(lead.config().members, expected) << "seed " << seed;

  // Every acknowledged update is there: on every member, and through a linearizable read.
  const auto info = query(w, w.now() + 10);
  ASSERT_TRUE(info) << "seed " << seed;
  for (const auto& u : work.acked()) {
    EXPECT_TRUE(holds(*info, u.command)) << "seed " << seed << ": update " << u.seq << " lost";
    for (PeerId m : lead.config().members) EXPECT_TRUE(holds(w.replica(m)->machine()->info(), u.command));
  }
  EXPECT_EQ(info->files.size(), 60u);
  *ops += work.acked().size();
}

TEST(TrackerGroup, SurvivesLosingOneOfThreeReplicasIncludingTheLeader) {
  std::uint64_t ops = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    survives_minority_loss(3, 1, seed, &ops);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(ops, 200u * 120u);
}

TEST(TrackerGroup, SurvivesLosingTwoOfFiveReplicasIncludingTheLeader) {
  std::uint64_t ops = 0;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    survives_minority_loss(5, 2, seed, &ops);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(ops, 100u * 120u);
}

// Loses every replica after the creator's last snapshot and a few more acknowledged updates, then
// reboots the group from that snapshot on the live peers now closest to the key.
void recovers_from_snapshot(std::uint64_t seed, std::size_t* lost_total) {
  TrackerWorldOptions o;
  o.hosts = 10;
  o.replicas = 3;
  o.seed = seed;
  TrackerWorld w(o);
  ASSERT_TRUE(w.run_until_leader(5.0));
  Workload work(w, 1000);
  work.start();
  Rng rng(seed, 78);
  w.net().run_for(0.1 + 0.3 * rng.uniform());
  TrackerBackup& backup = w.start_backup(0.3);
  w.net().run_for(0.3 + rng.uniform());
  // The creator stops taking snapshots; the client goes on until a few more updates are acked.
  backup.stop();
  while (backup.waiting()) w.net().run_for(0.01);  // the last Export's reply
  ASSERT_TRUE(backup.latest()) << "seed " << seed;
  const TrackerSnapshot snapshot = *backup.latest();
  const std::size_t after = 1 + rng.below(5);
  const std::size_t acked_at_snapshot = work.acked().size();
  const Seconds deadline = w.now() + 10;
  while (work.acked().size() < acked_at_snapshot + after && w.now() < deadline) w.net().run_for(0.005);
  ASSERT_GE(work.acked().size(), acked_at_snapshot + after) << "seed " << seed;
  work.stop();

  // Every replica vanishes (the learner too, if one was being caught up).
  const PeerId leader = *w.leader();
  std::vector<PeerId> doomed = w.replica(leader)->node()->config().members;
  if (auto learner = w.replica(leader)->node()->learner()) doomed.push_back(*learner);
  for (PeerId p : doomed) w.lose(p);
  w.net().run_for(2.0);  // nothing answers the client meanwhile
  EXPECT_FALSE(w.leader());
  const std::vector<std::uint64_t> acked_seqs = w.client().acknowledged_updates();

  // The updates the snapshot holds are exactly those up to the client's restored session seq.
  const std::uint64_t restored = restored_last_seq(snapshot.state, w.client_peer(), w.client().client_id());
  for (const auto& u : work.acked())
    if (u.acked_at < snapshot.requested_at) EXPECT_LE(u.seq, restored) << "seed " << seed;  // linearizable Export
  const RebootOutcome outcome = w.reboot(snapshot);
  ASSERT_TRUE(outcome.ok) << "seed " << seed << ": the reboot was not hosted";
  const RebootPlan& plan = outcome.plan;
  // Every founding member answered that it hosts the new generation, over a lossy network.
  for (PeerId m : plan.members.members)
    EXPECT_TRUE(std::binary_search(outcome.hosting.begin(), outcome.hosting.end(), m)) << "seed " << seed;
  EXPECT_TRUE(outcome.refused.empty()) << "seed " << seed;
  // What the client reports lost when told of the reboot.
  const std::vector<std::uint64_t> lost = w.client().lost_since_reboot(restored);
  EXPECT_EQ(plan.raft.group, w.group());
  EXPECT_EQ(w.generation(), 1u);
  for (PeerId m : plan.members.members) EXPECT_FALSE(w.lost().count(m));
  ASSERT_TRUE(w.run_until_settled(w.now() + 20)) << "seed " << seed << ": the rebooted group did not settle";

  // The acknowledged updates reported lost: exactly those after the snapshot.
  std::vector<std::uint64_t> expected_lost;
  for (std::uint64_t s : acked_seqs)
    if (s > restored) expected_lost.push_back(s);
  EXPECT_EQ(lost, expected_lost) << "seed " << seed;
  // The updates acked after the snapshot arrived (one of them may have been applied before it).
  EXPECT_GE(lost.size() + 1, after) << "seed " << seed;

  // The client's pending update (if any) is retried on the new group; then the metadata holds every
  // update up to the restored seq and none of the lost ones, and the pending one was executed there
  // (an AddFile then holds; a contribution to a lost file is answered NoSuchFile).
  const auto info = query(w, w.now() + 10);
  ASSERT_TRUE(info) << "seed " << seed;
  const std::vector<std::uint64_t>& acked_now = w.client().acknowledged_updates();
  for (const auto& [seq, c] : work.submitted()) {
    const bool lost_one = std::find(lost.begin(), lost.end(), seq) != lost.end();
    const bool acked = std::find(acked_seqs.begin(), acked_seqs.end(), seq) != acked_seqs.end();
    if (seq <= restored) {
      EXPECT_TRUE(holds(*info, c)) << "seed " << seed << ": seq " << seq;
    } else if (lost_one) {
      EXPECT_FALSE(holds(*info, c)) << "seed " << seed << ": lost seq " << seq << " present";
    } else if (!acked) {
      EXPECT_TRUE(std::find(acked_now.begin(), acked_now.end(), seq) != acked_now.end())
          << "seed " << seed << ": pending seq " << seq << " not retried";
      // An AddFile holds unless the snapshot predates the dataset's creation (NoDataset then).
      if (c.op == TrackerOp::AddFile && info->created) EXPECT_TRUE(holds(*info, c)) << "seed " << seed << ": seq " << seq;
    }
  }
  EXPECT_EQ(w.violations(), "") << "seed " << seed;
  *lost_total += lost.size();
}

TEST(TrackerGroup, RebootsFromTheCreatorsSnapshotAfterLosingTheWholeGroup) {
  std::size_t lost = 0;
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    recovers_from_snapshot(seed, &lost);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(lost, 100u);
  std::printf("[ tracker  ] 100 reboots from a snapshot: %zu acknowledged updates reported lost\n", lost);
}

TEST(TrackerGroup, RebootRejectsABadSnapshot) {
  EXPECT_THROW(reboot_storage(Bytes{1, 2, 3}, raft::Configuration::of({0, 1, 2})), DecodeError);
  TrackerStateMachine m;
  const raft::MemoryStorage s = reboot_storage(m.snapshot(), raft::Configuration::of({4, 5, 6}));
  EXPECT_EQ(s.snapshot().last_index, 1u);
  EXPECT_EQ(s.snapshot().config, raft::Configuration::of({4, 5, 6}));
  EXPECT_EQ(s.term(), 1u);
}

}  // namespace
}  // namespace swarmlab::core::tracker
