// The state download (core/training/state_service.h) between two peers of the memory world.
#include "core/training/state_service.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "support/memory_world.h"

namespace swarmlab::core::training {
namespace {

struct TwoPeers {
  core::testing::MemoryWorld world{2, core::testing::PeerSpec{0.01, 1e8, 0}};
  // Peer 1 holds step 7 (lineage 70) and keeps the updates from step 5 (lineage 50) on.
  StateService provider{world.env(1), StateConfig{}, [](const StateWanted& w) -> std::optional<StateSnapshot> {
                          StateSnapshot s;
                          s.step = 7;
                          s.lineage = 70;
                          if (!w.updates) s.bytes.assign(1000, 1);
                          else if (w.since_step == 5 && w.since_lineage == 50) s.bytes.assign(80, 2);
                          else return std::nullopt;
                          return s;
                        }};
  StateService asker{world.env(0), StateConfig{}, [](const StateWanted&) { return std::optional<StateSnapshot>{}; }};
  TwoPeers() {
    world.env(0).set_sink(&asker);
    world.env(1).set_sink(&provider);
  }
  ~TwoPeers() {
    world.env(0).set_sink(nullptr);
    world.env(1).set_sink(nullptr);
  }
};

TEST(StateService, ServesTheWholeStateOrTheUpdatesSinceAStateItKept) {
  TwoPeers p;
  std::optional<StateSnapshot> whole, updates;
  p.asker.download(1, [&](bool ok, StateSnapshot s) { if (ok) whole = std::move(s); });
  p.world.run();
  ASSERT_TRUE(whole.has_value());
  EXPECT_EQ(whole->bytes.size(), 1000u);
  EXPECT_EQ(whole->step, 7u);
  p.asker.download_updates(1, 5, 50, [&](bool ok, StateSnapshot s) { if (ok) updates = std::move(s); });
  p.world.run();
  ASSERT_TRUE(updates.has_value());
  EXPECT_EQ(updates->bytes, std::vector<std::uint8_t>(80, 2));
  EXPECT_EQ(updates->lineage, 70u);
}

TEST(StateService, AProviderThatKeepsNoSuchStepsRefusesAtOnce) {
  TwoPeers p;
  std::optional<bool> result;
  p.asker.download_updates(1, 5, 51, [&](bool ok, StateSnapshot) { result = ok; });  // another lineage
  p.world.run();
  ASSERT_TRUE(result.has_value());
  EXPECT_FALSE(*result);
  EXPECT_LT(p.world.now(), 1.0);  // told, not timed out (idle timeout: 60 s)
  EXPECT_EQ(p.provider.served(), 0u);
}

}  // namespace
}  // namespace swarmlab::core::training
