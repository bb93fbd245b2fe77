#include "core/tracker/leader_reporter.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "core/service_mux.h"
#include "core/tracker/bootstrap_server.h"
#include "core/tracker/group.h"
#include "core/tracker/replica.h"
#include "support/memory_world.h"

namespace swarmlab::core::tracker {
namespace {

using core::testing::MemoryWorld;

// Five tracker hosts (three found the group, two wait as candidates), a bootstrap server and a
// peer that looks the tracker up, over a lossy, reordering network. Every host reports its
// leadership through its own BootstrapClient.
struct ReportingWorld {
  static constexpr PeerId kServer = 5, kFinder = 6;
  static constexpr const char* kTitle = "fashion-mnist";

  explicit ReportingWorld(std::uint64_t seed, Seconds refresh = 2)
      : net(7, core::testing::PeerSpec{0.005}, seed) {
    net.set_faults({0.05, 0.02, 0.001, 0.01, false});
    server = std::make_unique<BootstrapServer>(net.env(kServer), seed);
    net.env(kServer).set_sink(server.get());
    server->directory().register_dataset(kTitle, kFinder);
    finder = std::make_unique<BootstrapClient>(net.env(kFinder), kServer, 0.2, 10);
    net.env(kFinder).set_sink(finder.get());
    Rng rng(seed, 7);
    std::vector<raft::CandidatePeer> hosts;
    for (PeerId p = 0; p < 5; ++p) hosts.push_back({p, dht::NodeId::random(rng, dht::kHydraIdBits)});
    TrackerGroupOptions options;
    options.replicas = 3;
    const raft::RaftConfig cfg = tracker_raft_config(kTitle, options);
    group = cfg.group;
    const std::vector<PeerId> candidates = tracker_candidates(kTitle, hosts);
    const raft::Configuration members = raft::Configuration::of(founding_members(candidates, options.replicas));
    for (PeerId p = 0; p < 5; ++p) {
      peers.push_back(std::make_unique<HostPeer>(net, p, refresh));
      raft::RaftHooks hooks;
      hooks.on_role = [r = peers.back()->reporter.get()](raft::Role role, raft::Term term) { r->on_role(role, term); };
      raft::MemoryStorage storage;
      if (members.contains(p)) storage = raft::MemoryStorage(members);
      peers.back()->host.host(cfg, std::move(storage), candidates, hooks);
    }
  }
  ~ReportingWorld() {
    for (auto& p : peers) p->host.drop(group);
  }

  struct HostPeer {
    HostPeer(MemoryWorld& net, PeerId p, Seconds refresh)
        : host(net.env(p)), client(net.env(p), kServer, 0.2, 10),
          reporter(std::make_unique<LeaderReporter>(net.env(p), client, kTitle, 0, refresh)) {
      mux.add(ServiceId::Raft, host);
      mux.add(ServiceId::Tracker, host);
      mux.add(ServiceId::Bootstrap, client);
      net.env(p).set_sink(&mux);
    }
    TrackerHost host;
    BootstrapClient client;
    std::unique_ptr<LeaderReporter> reporter;
    ServiceMux mux;
  };

  std::optional<PeerId> leader() {
    std::optional<PeerId> best;
    for (PeerId p = 0; p < 5; ++p) {
      TrackerReplica* r = peers[p]->host.replica(group);
      if (net.is_up(p) && r && r->running() && r->node()->is_leader() &&
          (!best || r->node()->term() > peers[*best]->host.replica(group)->node()->term()))
        best = p;
    }
    return best;
  }
  // Until the leader's configuration has three members, committed, all up and caught up.
  bool run_until_whole(Seconds deadline) {
    while (net.now() < deadline) {
      if (const auto l = leader()) {
        const raft::RaftNode& lead = *peers[*l]->host.replica(group)->node();
        // Nothing pending: a configuration appended but not committed is not in force yet.
        bool whole = lead.config().size() == 3 && !lead.learner() && lead.last_index() == lead.commit_index();
        for (PeerId m : lead.config().members) {
          const TrackerReplica* r = peers[m]->host.replica(group);
          whole = whole && net.is_up(m) && r && r->running() && r->node()->applied_index() == lead.commit_index();
        }
        if (whole) return true;
      }
      net.run_for(0.05);
    }
    return false;
  }
  // Whom the bootstrap server names as the tracker's leader, asked over the network.
  std::optional<PeerId> named_leader() {
    std::optional<std::optional<std::optional<TrackerLocation>>> got;
    finder->find_tracker(kTitle, [&](std::optional<std::optional<TrackerLocation>> where) { got = where; });
    while (!got) net.run_for(0.01);
    if (!*got || !**got) return std::nullopt;
    return (**got)->leader;
  }

  MemoryWorld net;
  std::unique_ptr<BootstrapServer> server;
  std::unique_ptr<BootstrapClient> finder;
  std::vector<std::unique_ptr<HostPeer>> peers;
  std::uint64_t group = 0;
};

TEST(LeaderReporter, TheServerNamesTheCurrentLeaderThroughCrashesOfLeaders) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    ReportingWorld w(seed);
    w.net.run_for(2.0);
    const std::optional<PeerId> first = w.leader();
    ASSERT_TRUE(first) << "seed " << seed;
    EXPECT_EQ(w.named_leader(), first) << "seed " << seed;
    // Two leaders in a row crash; each successor is named within an election and a report.
    PeerId gone = *first;
    for (int crash = 0; crash < 2; ++crash) {
      // A crash only once the group has replaced the last lost replica: two of three gone at once
      // would leave no majority.
      ASSERT_TRUE(w.run_until_whole(w.net.now() + 10)) << "seed " << seed << " crash " << crash;
      w.net.set_down(gone, MemoryWorld::Departure::Crash);
      w.peers[gone]->host.drop(w.group);
      const Seconds deadline = w.net.now() + 5;
      std::optional<PeerId> next;
      while (w.net.now() < deadline && (!(next = w.leader()) || w.named_leader() != next)) w.net.run_for(0.05);
      ASSERT_TRUE(next) << "seed " << seed << " crash " << crash;
      EXPECT_NE(*next, gone);
      EXPECT_EQ(w.named_leader(), next) << "seed " << seed << " crash " << crash;
      EXPECT_GT(w.server->directory().find(ReportingWorld::kTitle)->leader_term, 1u);
      gone = *next;
    }
    for (PeerId p = 0; p < 5; ++p)  // among the replicas still up, only the leader reports
      if (w.net.is_up(p) && w.peers[p]->reporter->leading()) EXPECT_EQ(p, gone) << "seed " << seed;
  }
}

TEST(LeaderReporter, AServerThatRestartedEmptyLearnsTheLeaderAtTheNextRefresh) {
  ReportingWorld w(3, 2.0);
  w.net.run_for(2.0);
  const std::optional<PeerId> leader = w.leader();
  ASSERT_TRUE(leader);
  w.server = std::make_unique<BootstrapServer>(w.net.env(ReportingWorld::kServer), 99);
  w.net.env(ReportingWorld::kServer).set_sink(w.server.get());
  w.server->directory().register_dataset(ReportingWorld::kTitle, ReportingWorld::kFinder);
  EXPECT_EQ(w.named_leader(), std::nullopt);
  w.net.run_for(2.5);  // one refresh
  EXPECT_EQ(w.named_leader(), leader);
  EXPECT_GE(w.peers[*leader]->reporter->reports(), 2u);
}

TEST(LeaderReporter, RejectsANonPositiveRefresh) {
  core::testing::MemoryWorld net(2, core::testing::PeerSpec{0.005}, 1);
  BootstrapClient client(net.env(0), 1);
  EXPECT_THROW(LeaderReporter(net.env(0), client, "x", 0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::core::tracker
