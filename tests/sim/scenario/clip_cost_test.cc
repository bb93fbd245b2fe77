// CenteredClip's processor time in a simulated collaboration (docs/trust.md §3): the scenario's
// coefficients reach every peer (sim/scenario/peer_setup.cc), and rounds take longer by what the
// reducers' clips cost.
#include <gtest/gtest.h>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"

namespace swarmlab::sim {
namespace {

// Four equal peers at 1 Gb/s averaging 1 M fp32 parameters with equal shares: each reduces a span
// of 250,000 elements in two parts (131,072 and 118,928 elements of 512 KiB parts), over four
// contributions. One clip iteration at 100 ns per value: 52 and 48 ms per part, 0.1 s a span, far
// more than the round's transfers (67 ms): the clips, not the links, then set the round's length.
const char* kClipped = R"({
  "name": "clip-cost", "seed": 3,
  "workload": {"model": "m", "parameters": 1000000, "wire_precision": "fp32", "target_batch": 64},
  "peers": [{"name": "p", "count": 4, "compute_sps": 100, "bandwidth_bps": 1e9, "latency_ms": 1}],
  "averaging": {"strategy": "ar",
                "centered_clip": {"tau": 1, "iterations": 1, "median_s_per_value": 1e-7,
                                  "iteration_s_per_value": 0}}
})";

TEST(ClipCost, SimulatedRoundsTakeTheReducersClipTime) {
  scenarios::Scenario sc = scenarios::parse_scenario(kClipped, "clip-cost.json");
  AveragingRunConfig cfg;
  cfg.strategy = core::averaging::Strategy::AllReduce;
  cfg.rounds = 3;
  const AveragingRunResult charged = run_averaging(sc, cfg);
  sc.averaging.clip_cost = {};
  const AveragingRunResult free = run_averaging(sc, cfg);
  ASSERT_EQ(charged.rounds.size(), 3u);
  ASSERT_EQ(free.rounds.size(), 3u);
  // A reducer's processor works 0.1 s on its span after the round starts, and the delay it adds
  // can be no more than that.
  EXPECT_GT(charged.mean_round_s, 0.1);
  EXPECT_LT(charged.mean_round_s, free.mean_round_s + 0.1);
  EXPECT_LT(free.mean_round_s, 0.08);

  // Without the clip nothing is charged, whatever the coefficients say.
  scenarios::Scenario mean = scenarios::parse_scenario(kClipped, "clip-cost.json");
  mean.averaging.centered_clip.reset();
  EXPECT_DOUBLE_EQ(run_averaging(mean, cfg).mean_round_s, free.mean_round_s);
}

}  // namespace
}  // namespace swarmlab::sim
