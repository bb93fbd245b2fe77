// Per-peer limits and bans (core/peer_limits.h, docs/trust.md §2): the budget itself, and the
// services that spend it: early averaging parts, state requests (refused over the budget), the mux
// that drops a banned peer.
#include "core/peer_limits.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/averaging/averaging_service.h"
#include "core/averaging/part_message.h"
#include "core/service_mux.h"
#include "core/training/state_messages.h"
#include "core/training/state_service.h"
#include "support/memory_world.h"

namespace swarmlab::core {
namespace {

using testing::MemoryWorld;
using testing::PeerSpec;

Message early_part(std::uint64_t round_id, std::size_t floats) {
  averaging::PartHeader h;
  h.round_id = round_id;
  h.weight = 1;
  h.elements = static_cast<std::uint32_t>(floats);
  return averaging::encode_part(h, std::vector<float>(floats, 1.0f), false);
}

TEST(PeerLimits, HoldingPastTheBudgetBansForAWhileAndReleasingGivesItBack) {
  MemoryWorld world(1);
  PeerLimits limits(world.env(0), {1000, 4, 60, 300});
  EXPECT_TRUE(limits.hold(7, 600));
  limits.release(7, 200);
  EXPECT_EQ(limits.held(7), 400u);
  EXPECT_TRUE(limits.hold(7, 600));
  EXPECT_FALSE(limits.banned(7));
  EXPECT_FALSE(limits.hold(7, 1));  // 1001 > 1000
  EXPECT_TRUE(limits.banned(7));
  EXPECT_FALSE(limits.banned(8));
  EXPECT_FALSE(limits.hold(7, 0));  // nothing is kept for a banned peer
  EXPECT_EQ(limits.bans(), 1u);
  world.run_for(299);
  EXPECT_TRUE(limits.banned(7));
  world.run_for(1);
  EXPECT_FALSE(limits.banned(7));
}

TEST(PeerLimits, RequestsAreCountedOverASlidingWindow) {
  MemoryWorld world(1);
  PeerLimits limits(world.env(0), {1000, 3, 60, 300});
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(limits.admit_request(5));
    world.run_for(25);
  }
  // The first request, at t = 0, has left the 60 s window at t = 75: one more fits.
  EXPECT_TRUE(limits.admit_request(5));
  EXPECT_FALSE(limits.admit_request(5));  // four within 60 s: refused, and not counted
  EXPECT_FALSE(limits.banned(5));
  EXPECT_EQ(limits.bans(), 0u);
  EXPECT_EQ(limits.refused_requests(), 1u);
  world.run_for(25);  // t = 100: the request at t = 25 has left the window
  EXPECT_TRUE(limits.admit_request(5));
  EXPECT_FALSE(limits.admit_request(5));
}

TEST(PeerLimits, AFloodOfEarlyPartsBansItsSenderAndKeepsTheOthers) {
  // Peer 1 sends parts for rounds that will never start; peer 2 is early for a real one. Past its
  // budget, everything kept for peer 1 goes, the mux drops what it sends next, and peer 2's part
  // is still there.
  MemoryWorld world(3, PeerSpec{0.001, 0, 0});
  PeerLimits limits(world.env(0), {64 * 1024, 16, 60, 300});
  averaging::AveragingService service(world.env(0), &limits);
  ServiceMux mux;
  mux.set_limits(&limits);
  mux.add(ServiceId::Averaging, service);
  world.env(0).set_sink(&mux);
  world.env(2).send(0, early_part(42, 1000));
  for (std::uint64_t r = 0; r < 40; ++r) world.env(1).send(0, early_part(1000 + r, 1000));  // 40 × 4 KB
  world.run();
  EXPECT_TRUE(limits.banned(1));
  EXPECT_EQ(limits.held(1), 0u);
  EXPECT_GT(limits.held(2), 4000u);
  EXPECT_GT(service.dropped_messages(), 0u);
  EXPECT_GT(mux.dropped_from_banned(), 0u);  // the parts peer 1 sent after its ban
  EXPECT_FALSE(limits.banned(2));
  world.env(0).set_sink(nullptr);
}

TEST(PeerLimits, AStateRequesterOverItsBudgetIsRefusedOutLoudAndNotBanned) {
  // A peer catching up one step at a time in a fast collaboration may ask more often than the
  // budget allows. It is told at once, so it asks someone else, instead of waiting for an answer
  // that never comes; and it is not banned, so its rounds and DHT traffic still reach this peer.
  MemoryWorld world(2, PeerSpec{0.001, 0, 0});
  PeerLimits limits(world.env(1), {1 << 20, 3, 60, 300});
  std::size_t sources = 0;
  training::StateService provider(world.env(1), training::StateConfig{}, [&](const training::StateWanted&) {
    ++sources;
    training::StateSnapshot s;
    s.bytes.assign(100, 1);
    return std::optional<training::StateSnapshot>(s);
  }, &limits);
  training::StateService asker(world.env(0), training::StateConfig{}, [](const training::StateWanted&) {
    return std::optional<training::StateSnapshot>();
  });
  world.env(1).set_sink(&provider);
  world.env(0).set_sink(&asker);
  std::vector<bool> outcomes;
  std::vector<Seconds> took;
  for (int i = 0; i < 5; ++i) {
    const Seconds asked = world.now();
    asker.download(1, [&, asked](bool ok, training::StateSnapshot) {
      outcomes.push_back(ok);
      took.push_back(world.now() - asked);
    });
    world.run();
  }
  EXPECT_EQ(outcomes, (std::vector<bool>{true, true, true, false, false}));
  ASSERT_EQ(took.size(), 5u);
  EXPECT_LT(took[3], 0.1);  // a round trip, not the 60 s idle timeout
  EXPECT_EQ(sources, 3u);   // nothing is exported for a refused request
  EXPECT_EQ(provider.served(), 3u);
  EXPECT_FALSE(limits.banned(0));
  EXPECT_EQ(limits.refused_requests(), 2u);
  world.run_for(61);  // the window has passed: served again
  bool served_again = false;
  asker.download(1, [&](bool ok, training::StateSnapshot) { served_again = ok; });
  world.run();
  EXPECT_TRUE(served_again);
  world.env(0).set_sink(nullptr);
  world.env(1).set_sink(nullptr);
}

}  // namespace
}  // namespace swarmlab::core
