// What a live run takes from a scenario (exec/live_scenario.h).
#include "exec/live_scenario.h"

#include <gtest/gtest.h>

#include "scenarios/scenario_loader.h"

namespace swarmlab::exec {
namespace {

TEST(LiveScenario, ALiveReducersClipIsNotChargedTwice) {
  // The simulator charges CenteredClip's processor time by the scenario's coefficients; a live
  // reducer spends the real time, so its view of the scenario charges nothing.
  const scenarios::Scenario sc = scenarios::parse_scenario(
      R"({"name": "clip", "workload": {"model": "m", "parameters": 10, "target_batch": 1},
          "peers": [{"name": "p", "count": 2, "compute_sps": 1, "bandwidth_bps": 1e9}],
          "averaging": {"strategy": "ar", "centered_clip": {"tau": 1}}})",
      "clip.json");
  ASSERT_TRUE(sc.averaging.clip_cost.charges());
  const scenarios::Scenario live = live_view(sc, LiveOverrides{});
  EXPECT_TRUE(live.averaging.centered_clip.has_value());
  EXPECT_FALSE(live.averaging.clip_cost.charges());
}

}  // namespace
}  // namespace swarmlab::exec
