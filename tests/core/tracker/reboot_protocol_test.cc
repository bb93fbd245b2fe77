// The reboot protocol (core/tracker/reboot_messages.h, TrackerHost::serve_reboots,
// TrackerRebooter): its encoding, what a host answers, and how the creator's side fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>

#include "core/service_ids.h"
#include "core/tracker/reboot.h"
#include "core/tracker/reboot_messages.h"
#include "core/tracker/replica.h"
#include "core/tracker/state_machine.h"
#include "support/memory_world.h"

namespace swarmlab::core::tracker {
namespace {

RebootRequest sample_request(const Bytes& state) {
  RebootRequest q;
  q.request_id = 300;
  q.title = "fashion-mnist";
  q.generation = 2;
  q.members = {1, 4, 7};
  q.candidates = {4, 1, 9, 7};
  q.state = state;
  return q;
}

TEST(RebootMessages, RoundTripAndRejectEverythingElse) {
  TrackerStateMachine machine;
  const RebootRequest q = sample_request(machine.snapshot());
  const auto bytes = encode(q);
  EXPECT_EQ(peek_service(bytes), ServiceId::Tracker);
  EXPECT_EQ(peek_reboot_kind(bytes), RebootKind::Request);
  EXPECT_EQ(decode_reboot_request(bytes), q);
  for (std::size_t n = 0; n < bytes.size(); ++n)
    EXPECT_THROW(decode_reboot_request(std::span(bytes.data(), n)), DecodeError) << n;
  auto trailing = bytes;
  trailing.push_back(0);
  EXPECT_THROW(decode_reboot_request(trailing), DecodeError);

  const RebootReply r{300, 2, RebootStatus::Stale};
  EXPECT_EQ(decode_reboot_reply(encode(r)), r);
  EXPECT_EQ(peek_reboot_kind(encode(r)), RebootKind::Reply);
  EXPECT_THROW(decode_reboot_request(encode(r)), DecodeError);
  EXPECT_THROW(decode_reboot_reply(bytes), DecodeError);
  auto bad_status = encode(r);
  bad_status.back() = 5;
  EXPECT_THROW(decode_reboot_reply(bad_status), DecodeError);

  auto rejects = [](RebootRequest m) { return [m] { (void)decode_reboot_request(encode(m)); }; };
  RebootRequest m = q;
  m.generation = 0;
  EXPECT_THROW(rejects(m)(), DecodeError);
  m = q;
  m.members = {4, 1, 7};  // not ascending
  EXPECT_THROW(rejects(m)(), DecodeError);
  m = q;
  m.members = {};
  EXPECT_THROW(rejects(m)(), DecodeError);
  m = q;
  m.candidates = {4, 1, 9, 7, 4};  // repeated
  EXPECT_THROW(rejects(m)(), DecodeError);
  m = q;
  m.candidates = {4, 1, 9};  // member 7 missing
  EXPECT_THROW(rejects(m)(), DecodeError);
  m = q;
  m.title = "";
  EXPECT_THROW(rejects(m)(), DecodeError);
  RebootLimits small;
  small.max_state_bytes = 4;
  EXPECT_THROW(decode_reboot_request(bytes, small), DecodeError);
  EXPECT_THROW(peek_reboot_kind(std::vector<std::uint8_t>{static_cast<std::uint8_t>(ServiceId::Tracker), 3}), DecodeError);
}

// A host at peer 1 and a sender at peer 0 that records the replies.
struct HostWorld {
  struct Replies final : Service {
    std::vector<RebootReply> got;
    void handle(PeerId, const Message& m) override { got.push_back(decode_reboot_reply(m.bytes)); }
    void on_link_failure(PeerId) override {}
  };
  HostWorld() : world(10, core::testing::PeerSpec{0.01}, 5), host(world.env(1)) {
    world.env(0).set_sink(&replies);
    world.env(1).set_sink(&host);
  }
  RebootStatus ask(const RebootRequest& q) {
    const std::size_t before = replies.got.size();
    world.env(0).send(1, Message{encode(q), 0});
    world.run_for(1);
    EXPECT_EQ(replies.got.size(), before + 1);
    return replies.got.empty() ? RebootStatus::BadState : replies.got.back().status;
  }
  core::testing::MemoryWorld world;
  TrackerHost host;
  Replies replies;
};

TEST(RebootProtocol, AHostFoundsTheGenerationOnceAndRefusesWhatItShouldNot) {
  HostWorld w;
  TrackerStateMachine machine;
  RebootRequest q = sample_request(machine.snapshot());
  // Not serving reboots yet: dropped, no answer.
  w.world.env(0).send(1, Message{encode(q), 0});
  w.world.run_for(1);
  EXPECT_TRUE(w.replies.got.empty());
  EXPECT_EQ(w.host.dropped(), 1u);

  w.host.serve_reboots(TrackerGroupOptions{});
  TrackerGroupOptions o;
  o.generation = 2;
  const std::uint64_t group2 = tracker_raft_config(q.title, o).group;
  EXPECT_EQ(w.ask(q), RebootStatus::Hosting);
  ASSERT_NE(w.host.replica(group2), nullptr);
  EXPECT_EQ(w.host.replica(group2)->storage().snapshot().config, raft::Configuration::of({1, 4, 7}));
  EXPECT_EQ(w.ask(q), RebootStatus::Hosting);  // repeated: the same answer, hosted once
  EXPECT_EQ(w.host.reboots_hosted(), 1u);

  RebootRequest older = q;
  older.generation = 1;
  EXPECT_EQ(w.ask(older), RebootStatus::Stale);
  RebootRequest stranger = q;
  stranger.generation = 3;
  stranger.members = {4, 7};
  stranger.candidates = {4, 7, 9};
  EXPECT_EQ(w.ask(stranger), RebootStatus::NotCandidate);
  RebootRequest corrupt = q;
  corrupt.generation = 3;
  corrupt.state = Bytes{1, 2, 3};
  EXPECT_EQ(w.ask(corrupt), RebootStatus::BadState);
  EXPECT_NE(w.host.replica(group2), nullptr);  // refusals change nothing

  // A candidate that is not a founding member hosts an empty replica that waits to be added, and
  // the newer generation replaces the older one on this peer.
  RebootRequest waiting = q;
  waiting.generation = 3;
  waiting.members = {4, 7, 9};
  waiting.candidates = {4, 7, 9, 1};
  waiting.state.clear();
  EXPECT_EQ(w.ask(waiting), RebootStatus::Hosting);
  o.generation = 3;
  const TrackerReplica* r3 = w.host.replica(tracker_raft_config(q.title, o).group);
  ASSERT_NE(r3, nullptr);
  EXPECT_EQ(r3->storage().snapshot().last_index, 0u);
  EXPECT_EQ(w.host.replica(group2), nullptr);
  EXPECT_EQ(w.host.groups().size(), 1u);

  // Garbage on the tracker service is counted and dropped.
  const std::uint64_t dropped = w.host.dropped();
  w.world.env(0).send(1, Message{{static_cast<std::uint8_t>(ServiceId::Tracker), 1, 0xFF}, 0});
  w.world.run_for(1);
  EXPECT_EQ(w.host.dropped(), dropped + 1);
}

// Hosts at peers 0..5 (peer 5 down), the creator's rebooter at peer 6.
struct RebooterWorld {
  RebooterWorld() : world(7, core::testing::PeerSpec{0.01}, 9), rebooter(world.env(6), 0.2, 3) {
    Rng rng(3, 3);
    for (PeerId p = 0; p < 7; ++p) {
      hosts.push_back(std::make_unique<TrackerHost>(world.env(p)));
      world.env(p).set_sink(hosts.back().get());
      if (p < 6) {
        hosts.back()->serve_reboots(TrackerGroupOptions{});
        peers.push_back({p, dht::NodeId::random(rng, dht::kHydraIdBits)});
      }
    }
    hosts[6]->attach_rebooter(rebooter);
  }
  ~RebooterWorld() { hosts[6]->detach_rebooter(); }
  RebootOutcome run(const TrackerSnapshot& snapshot, std::vector<raft::CandidatePeer> live) {
    std::optional<RebootOutcome> out;
    rebooter.reboot(snapshot, std::move(live), TrackerGroupOptions{}, [&](const RebootOutcome& o) { out = o; });
    EXPECT_THROW(rebooter.reboot(snapshot, peers, TrackerGroupOptions{}, [](const RebootOutcome&) {}), std::logic_error);
    while (!out) world.run_for(0.05);
    return *out;
  }
  core::testing::MemoryWorld world;
  TrackerRebooter rebooter;
  std::vector<std::unique_ptr<TrackerHost>> hosts;
  std::vector<raft::CandidatePeer> peers;
};

TEST(RebootProtocol, TheCreatorsSideSucceedsFailsOnARefusalAndTimesOutOnASilentMember) {
  TrackerStateMachine machine;
  TrackerSnapshot snapshot{"fashion-mnist", 0, machine.snapshot(), 0, 0};
  {
    RebooterWorld w;
    std::vector<raft::CandidatePeer> live(w.peers.begin(), w.peers.begin() + 5);  // peer 5 is not asked
    const RebootOutcome o = w.run(snapshot, live);
    EXPECT_TRUE(o.ok);
    for (PeerId m : o.plan.members.members) {
      EXPECT_TRUE(std::binary_search(o.hosting.begin(), o.hosting.end(), m)) << m;
      EXPECT_NE(w.hosts[m]->replica(o.plan.raft.group), nullptr) << m;
    }
    // The other candidates got their requests too (the network here loses nothing).
    w.world.run_for(1);
    for (const auto& c : live) EXPECT_NE(w.hosts[c.peer]->replica(o.plan.raft.group), nullptr) << c.peer;
    EXPECT_EQ(w.hosts[5]->replica(o.plan.raft.group), nullptr);
  }
  {
    RebooterWorld w;
    snapshot.state = Bytes{9, 9, 9};  // no founding member can restore it
    const RebootOutcome o = w.run(snapshot, w.peers);
    EXPECT_FALSE(o.ok);
    EXPECT_FALSE(o.refused.empty());
    EXPECT_LT(o.finished - o.started, 1.0);  // at the first refusal, not at the timeout
    snapshot.state = machine.snapshot();
  }
  {
    RebooterWorld w;
    w.world.set_down(5, core::testing::MemoryWorld::Departure::Silent);
    // Peer 5 first among the candidates: give it the id closest to the key.
    w.peers[5].id = dataset_key("fashion-mnist");
    const RebootOutcome o = w.run(snapshot, w.peers);
    EXPECT_FALSE(o.ok);
    EXPECT_TRUE(o.plan.members.contains(5));
    EXPECT_NEAR(o.finished - o.started, 3.0, 1e-9);  // the timeout
    EXPECT_GT(w.rebooter.requests_sent(), 6u);       // retried
  }
  {
    RebooterWorld w;
    EXPECT_THROW(w.rebooter.reboot(snapshot, {}, TrackerGroupOptions{}, [](const RebootOutcome&) {}), std::invalid_argument);
  }
}

}  // namespace
}  // namespace swarmlab::core::tracker
