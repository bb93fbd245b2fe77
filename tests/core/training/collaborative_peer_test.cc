// The training schedule itself (core/training/collaborative_peer.h) on the memory world: the core
// and its test double, with the DHT coordinator, no simulator.
#include "core/training/collaborative_peer.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/training/dht_coordinator.h"
#include "support/memory_world.h"
#include "support/timed_learner.h"

namespace swarmlab::core::training {
namespace {

// Under a quota (DiLoCo's H inner steps) a worker starts its part of the round only once its own
// quota is in. Here every worker computes at half the speed it announces, so the collaboration's
// estimate, which extrapolates announced speeds, says each quota is in long before it is (what a
// loaded CPU does to a live peer).
TEST(CollaborativePeer, AWorkerSlowerThanItAnnouncesStillContributesItsWholeQuota) {
  constexpr std::size_t kPeers = 3;
  constexpr std::uint64_t kQuota = 40;
  core::testing::MemoryWorld world(kPeers, core::testing::PeerSpec{0.01, 1e8, /*compute_sps=*/5});
  std::vector<std::uint64_t> contributions;
  std::vector<std::unique_ptr<CollaborativePeer>> peers;
  for (PeerId i = 0; i < kPeers; ++i) {
    CollaborativePeerConfig c;
    c.mode = Mode::Diloco;
    c.quota = kQuota;
    c.trainer.micro_batch = 10;
    c.strategy = averaging::Strategy::AllReduce;
    c.capacity.compute_sps = 10;  // announced: twice what the machine does
    c.capacity.upload_bps = c.capacity.download_bps = 1e8;
    c.matchmaking_lead = 2;
    DhtCoordinatorConfig dc;
    dc.progress.run = "slow-workers";
    dc.progress.target = c.step_target();
    dc.matchmaking.prefix = "slow-workers_averaging";
    dc.matchmaking.min_group_size = dc.matchmaking.target_group_size = kPeers;
    PeerParts parts;
    parts.coordinator = std::make_unique<DhtCoordinator>(world.env(i), dc);
    parts.learner = std::make_unique<core::testing::TimedLearner>(world.env(i), 1000);
    CollaborativePeerEvents events;
    events.round_started = [&](const averaging::RoundPlan&, std::uint64_t contributed) { contributions.push_back(contributed); };
    peers.push_back(std::make_unique<CollaborativePeer>(world.env(i), c, std::move(parts), std::move(events)));
  }
  for (PeerId i = 0; i < kPeers; ++i) peers[i]->start(i == 0 ? std::vector<PeerId>{} : std::vector<PeerId>{0});
  world.run_until(200);
  // 40 samples at 5 samples/s: 8 s of computing per outer step, plus matchmaking and the round.
  ASSERT_GE(contributions.size(), 5 * kPeers);
  for (std::size_t k = 0; k < contributions.size(); ++k) EXPECT_EQ(contributions[k], kQuota) << "round start " << k;
  for (const auto& p : peers) EXPECT_GE(p->step(), 5u);
}

// Every member maps group ids onto {0, 1, 2}, as a restarted leader repeating its predecessor's
// draws would: from the fourth group on, each id is one the peers averaged under before.
class FoldedGroupIds final : public Coordinator {
 public:
  explicit FoldedGroupIds(std::unique_ptr<Coordinator> inner) : inner_(std::move(inner)) {}
  void attach(ServiceMux& mux) override { inner_->attach(mux); }
  void join(std::vector<PeerId> bootstrap, Joined done) override { inner_->join(std::move(bootstrap), std::move(done)); }
  void report(const progress::LocalProgress& local) override { inner_->report(local); }
  void fetch(ProgressCallback done) override { inner_->fetch(std::move(done)); }
  progress::GlobalProgress estimate(Seconds now, std::span<const PeerId> group) const override {
    return inner_->estimate(now, group);
  }
  void member_lost(PeerId peer) override { inner_->member_lost(peer); }
  std::vector<StateHolder> peers_at(std::uint64_t step) const override { return inner_->peers_at(step); }
  void set_announcement(std::vector<std::uint8_t> bytes) override { inner_->set_announcement(std::move(bytes)); }
  void look_for_group(GroupCallback done, Seconds timeout, Seconds due) override {
    inner_->look_for_group(
        [done = std::move(done)](std::optional<matchmaking::Group> g) {
          if (g) g->group_id %= 3;
          done(std::move(g));
        },
        timeout, due);
  }
  void cancel_search() override { inner_->cancel_search(); }
  bool looking() const override { return inner_->looking(); }

 private:
  std::unique_ptr<Coordinator> inner_;
};

// A group id a peer already averaged under (a restarted leader whose random draws repeat its
// predecessor's; a Begin replayed from the network) is declined, not a crash: starting the round
// would throw, and before the fix every member of such a group died at once.
TEST(CollaborativePeer, AGroupIdItAveragedUnderBeforeIsDeclinedNotACrash) {
  constexpr std::size_t kPeers = 3;
  core::testing::MemoryWorld world(kPeers, core::testing::PeerSpec{0.01, 1e8, /*compute_sps=*/20});
  std::vector<std::unique_ptr<CollaborativePeer>> peers;
  for (PeerId i = 0; i < kPeers; ++i) {
    CollaborativePeerConfig c;
    c.target_batch = 40;
    c.trainer.micro_batch = 10;
    c.strategy = averaging::Strategy::AllReduce;
    c.capacity.compute_sps = 20;
    c.capacity.upload_bps = c.capacity.download_bps = 1e8;
    DhtCoordinatorConfig dc;
    dc.progress.run = "folded";
    dc.progress.target = c.step_target();
    dc.matchmaking.prefix = "folded_averaging";
    dc.matchmaking.min_group_size = 2;
    dc.matchmaking.target_group_size = kPeers;
    PeerParts parts;
    parts.coordinator = std::make_unique<FoldedGroupIds>(std::make_unique<DhtCoordinator>(world.env(i), dc));
    parts.learner = std::make_unique<core::testing::TimedLearner>(world.env(i), 1000);
    peers.push_back(std::make_unique<CollaborativePeer>(world.env(i), c, std::move(parts)));
  }
  for (PeerId i = 0; i < kPeers; ++i) peers[i]->start(i == 0 ? std::vector<PeerId>{} : std::vector<PeerId>{0});
  ASSERT_NO_THROW(world.run_until(120));
  std::uint64_t declined = 0;
  for (const auto& p : peers) {
    declined += p->repeated_groups();
    EXPECT_GE(p->step(), 1u);  // the first groups' ids were new
  }
  EXPECT_GT(declined, 0u);
}

// The bytes a peer may hold for one sender grow with the model: an honest sender early with its
// parts of one round of a large model must not be banned.
TEST(CollaborativePeer, TheHeldBytesBudgetCoversTwoWholeVectorsOfItsModel) {
  core::testing::MemoryWorld world(1, core::testing::PeerSpec{0.01, 1e8, 10});
  const auto make = [&](std::uint64_t parameters) {
    CollaborativePeerConfig c;
    c.target_batch = 10;
    c.capacity.compute_sps = 10;
    DhtCoordinatorConfig dc;
    dc.progress.run = "budget";
    dc.progress.target = c.step_target();
    dc.matchmaking.prefix = "budget_averaging";
    PeerParts parts;
    parts.coordinator = std::make_unique<DhtCoordinator>(world.env(0), dc);
    parts.learner = std::make_unique<core::testing::TimedLearner>(world.env(0), parameters);
    return std::make_unique<CollaborativePeer>(world.env(0), c, std::move(parts));
  };
  EXPECT_EQ(make(1000)->limits().config().max_held_bytes, PeerLimitsConfig{}.max_held_bytes);
  EXPECT_GE(make(std::uint64_t{1} << 30)->limits().config().max_held_bytes, std::uint64_t{8} << 30);
}

}  // namespace
}  // namespace swarmlab::core::training
