// The DHT coordinator (core/training/dht_coordinator.h) on the memory world.
#include "core/training/dht_coordinator.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/service_mux.h"
#include "support/memory_world.h"

namespace swarmlab::core::training {
namespace {

// A peer that loads another state at the same step must say so at once: others choose whom to
// download from, and whether they diverged, by the lineages in the records.
TEST(DhtCoordinator, ANewLineageAtTheSameStepIsPublishedAtOnce) {
  core::testing::MemoryWorld world(2, core::testing::PeerSpec{0.01, 1e8, 0});
  std::vector<std::unique_ptr<ServiceMux>> muxes;
  std::vector<std::unique_ptr<DhtCoordinator>> peers;
  for (PeerId i = 0; i < 2; ++i) {
    DhtCoordinatorConfig c;
    c.progress.run = "lineage";
    c.progress.target.batch = 100;
    c.report_period = 1000;  // no periodic refresh within the test
    peers.push_back(std::make_unique<DhtCoordinator>(world.env(i), c));
    muxes.push_back(std::make_unique<ServiceMux>([&world] { return world.now(); }));
    peers[i]->attach(*muxes[i]);
    world.env(i).set_sink(muxes[i].get());
  }
  peers[0]->join({}, [](bool) {});
  peers[1]->join({0}, [](bool) {});
  world.run_until(5);
  progress::LocalProgress local;
  local.step = 3;
  local.lineage = 0xa;
  peers[0]->report(local);
  world.run_until(10);
  local.lineage = 0xb;  // reloaded: same step, another state
  peers[0]->report(local);
  world.run_until(15);
  bool fetched = false;
  peers[1]->fetch([&](const progress::GlobalProgress&) { fetched = true; });
  world.run_until(20);
  ASSERT_TRUE(fetched);
  const std::span<const StateHolder> at_3 = peers[1]->peers_at(3);
  ASSERT_EQ(at_3.size(), 1u);
  EXPECT_EQ(at_3[0].lineage, 0xbu);
  for (PeerId i = 0; i < 2; ++i) world.env(i).set_sink(nullptr);
}

}  // namespace
}  // namespace swarmlab::core::training
