// Matchmaking feeds averaging: peers find groups, build the same RoundPlan from the group, and run
// a butterfly all-reduce of small real vectors within each group.
#include <gtest/gtest.h>

#include <map>

#include "core/averaging/averaging_service.h"
#include "core/matchmaking/announcement_codec.h"
#include "core/matchmaking/group_plan.h"
#include "matchmaker_fixture.h"

namespace swarmlab::core::matchmaking {
namespace {

TEST(MatchmakingToAveraging, GroupsRunAButterflyRound) {
  constexpr std::size_t kPeers = 12;
  constexpr std::uint64_t kLength = 1000;
  testing::MatchSwarm s(kPeers, [](PeerId) {
    MatchmakingConfig c;
    c.target_group_size = 4;
    return c;
  });
  std::vector<std::unique_ptr<averaging::AveragingService>> services;
  std::vector<std::vector<float>> values(kPeers);
  std::map<PeerId, Group> groups;
  std::map<PeerId, averaging::RoundOutcome> outcomes;
  for (PeerId p = 0; p < kPeers; ++p) {
    services.push_back(std::make_unique<averaging::AveragingService>(s.env(p)));
    auto* a = services.back().get();
    s.muxes[p]->add(ServiceId::Averaging, *a);
    values[p].assign(kLength, static_cast<float>(p + 1));
    s.mm[p]->set_gathered(encode_announcement({{100, 100e6, 50e6, false}}));
    s.mm[p]->look_for_group([&, p](std::optional<Group> g) {
      ASSERT_TRUE(g);
      groups[p] = *g;
      const auto roles = averaging::assign_roles(averaging::Strategy::AllReduce, group_capacities(*g));
      const auto plan = plan_for_group(*g, roles, kLength, codec::Codec::Fp32, 1024);
      services[p]->start_round(plan, values[p], {}, [&, p](const averaging::RoundOutcome& o) { outcomes[p] = o; });
    });
  }
  s.run_for(20);
  ASSERT_EQ(groups.size(), kPeers);
  ASSERT_EQ(outcomes.size(), kPeers);
  for (PeerId p = 0; p < kPeers; ++p) {
    EXPECT_TRUE(outcomes[p].completed) << "peer " << p;
    EXPECT_EQ(outcomes[p].round_id, groups[p].group_id);
    EXPECT_GE(groups[p].size(), 2u);
    double mean = 0;
    for (PeerId q : groups[p].peers()) mean += q + 1;
    mean /= static_cast<double>(groups[p].size());
    for (float v : values[p]) ASSERT_FLOAT_EQ(v, static_cast<float>(mean)) << "peer " << p;
  }
}

}  // namespace
}  // namespace swarmlab::core::matchmaking
