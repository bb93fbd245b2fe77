#include "core/tracker/bootstrap.h"

#include <gtest/gtest.h>

#include "core/tracker/group.h"

namespace swarmlab::core::tracker {
namespace {

TEST(TrackerBootstrap, AssignsDistinctStableIdsAndListsTheClosestPeers) {
  BootstrapDirectory d(7);
  std::set<dht::NodeId> seen;
  for (PeerId p = 0; p < 50; ++p) EXPECT_TRUE(seen.insert(d.assign_id(p)).second);
  EXPECT_EQ(d.assign_id(3), *d.id_of(3));
  EXPECT_FALSE(d.id_of(99));
  const dht::NodeId key = dataset_key("fashion-mnist");
  const std::vector<PeerId> closest = d.closest_peers(key, 5);
  ASSERT_EQ(closest.size(), 5u);
  for (std::size_t i = 1; i < closest.size(); ++i)
    EXPECT_LT(*d.id_of(closest[i - 1]) ^ key, *d.id_of(closest[i]) ^ key);
}

TEST(TrackerBootstrap, KeepsTheCatalogueAndEachTrackersLeaderByGeneration) {
  BootstrapDirectory d(1, 2);
  EXPECT_TRUE(d.register_dataset("fashion-mnist", 4));
  EXPECT_FALSE(d.register_dataset("fashion-mnist", 5));
  EXPECT_FALSE(d.register_dataset("", 5));
  EXPECT_TRUE(d.register_dataset("cifar-10", 5));
  EXPECT_FALSE(d.register_dataset("imagenet", 6));  // full
  EXPECT_EQ(d.titles(), (std::vector<std::string>{"cifar-10", "fashion-mnist"}));
  const CatalogueEntry* e = d.find("fashion-mnist");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->key, dataset_key("fashion-mnist"));
  EXPECT_EQ(e->creator, 4u);
  EXPECT_FALSE(e->leader);

  EXPECT_TRUE(d.report_leader("fashion-mnist", 0, 2, 8, 1.0));
  EXPECT_EQ(d.find("fashion-mnist")->leader, 8u);
  EXPECT_TRUE(d.report_leader("fashion-mnist", 0, 2, 8, 1.5));   // the same leader again
  EXPECT_FALSE(d.report_leader("fashion-mnist", 0, 2, 7, 1.5));  // another peer in its term
  EXPECT_TRUE(d.report_leader("fashion-mnist", 0, 3, 7, 1.6));   // elected in a later term
  EXPECT_FALSE(d.report_leader("fashion-mnist", 0, 2, 8, 1.7));  // the deposed leader, late
  EXPECT_EQ(d.find("fashion-mnist")->leader, 7u);
  EXPECT_TRUE(d.set_generation("fashion-mnist", 1));   // rebooted: leader unknown for now
  EXPECT_FALSE(d.find("fashion-mnist")->leader);
  EXPECT_FALSE(d.report_leader("fashion-mnist", 0, 9, 8, 2.0));  // the old group's leader is ignored
  EXPECT_TRUE(d.report_leader("fashion-mnist", 1, 1, 9, 3.0));   // terms start over in the new group
  EXPECT_EQ(d.find("fashion-mnist")->leader, 9u);
  EXPECT_EQ(d.find("fashion-mnist")->generation, 1u);
  EXPECT_FALSE(d.report_leader("unknown", 0, 1, 1, 0));
}

}  // namespace
}  // namespace swarmlab::core::tracker
