// The expected events of a training run and their bound (sim/experiments/run_cost.h), against the
// events runs really take: swarmlab albert orders its setups by the expectation, so it must rank
// averaging-bound and compute-bound runs as they run; the bound refuses runs past the budget, so
// it must hold, yet not refuse an averaging-bound swarm for the compute it never gets to do.
#include <gtest/gtest.h>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/run_cost.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::sim {
namespace {

// 4 peers at 10 samples/s, batch 400 (10 s of compute per step), 1 M fp32 parameters: a butterfly
// round takes about 10 s at 6.5 Mb/s and about 1 s at 65 Mb/s.
scenarios::Scenario swarm(double bandwidth_bps, bool dpu, double compute_sps = 10) {
  return scenarios::parse_scenario(R"({
    "name": "cost", "seed": 3,
    "workload": {"model": "toy", "parameters": 1000000, "wire_precision": "fp32", "target_batch": 400},
    "peers": [{"name": "gpu", "count": 4, "compute_sps": )" + std::to_string(compute_sps) +
                                       R"(, "bandwidth_bps": )" + std::to_string(bandwidth_bps) +
                                       R"(, "latency_ms": 5}],
    "averaging": {"strategy": "ar"},
    "training": {"dpu": )" + std::string(dpu ? "true" : "false") +
                                       R"(, "micro_batch": 5, "duration_s": 2000, "metrics_interval_s": 100}
  })", "cost.json");
}

TEST(ExpectedTrainingEvents, FollowsTheEventsRunsTakeAndStaysWithinTheBound) {
  const TransportAssumptions transport;
  std::vector<double> expected, measured;
  for (const double bps : {6.5e6, 65e6}) {
    for (const bool dpu : {false, true}) {
      const scenarios::Scenario sc = swarm(bps, dpu);
      const double e = expected_training_events(sc, 2000, dpu, transport);
      const TrainingRunResult r = run_training(sc);
      const double bound = training_cost(sc, 2000, dpu, transport).events;
      EXPECT_LE(e, bound);
      EXPECT_GE(bound, static_cast<double>(r.events));
      EXPECT_NEAR(e, static_cast<double>(r.events), 0.35 * static_cast<double>(r.events)) << bps << " b/s, dpu " << dpu;
      expected.push_back(e);
      measured.push_back(static_cast<double>(r.events));
    }
  }
  // Slow links without DPU take half the steps of the others (102 against 190-199): ranked so.
  for (std::size_t a = 0; a < expected.size(); ++a)
    for (std::size_t b = 0; b < expected.size(); ++b)
      if (measured[a] < 0.75 * measured[b]) EXPECT_LT(expected[a], expected[b]) << a << " vs " << b;
  EXPECT_LT(measured[0], 0.75 * measured[1]);  // the case that ranking is about does arise
}

TEST(ExpectedTrainingEvents, IsTheBoundWhereNoRoundTimeApplies) {
  const TransportAssumptions transport;
  scenarios::Scenario diloco = swarm(6.5e6, false);
  diloco.training.mode = core::training::Mode::Diloco;
  EXPECT_EQ(expected_training_events(diloco, 2000, false, transport), training_cost(diloco, 2000, false, transport).events);
}

TEST(TrainingCost, AnAveragingBoundSwarmIsBoundedByItsRoundsNotItsCompute) {
  const TransportAssumptions transport;
  // 100× the compute: a step's compute takes 0.1 s and its round about 10 s, so the peers wait.
  for (const bool dpu : {false, true}) {
    const scenarios::Scenario sc = swarm(6.5e6, dpu, 1000);
    const RunCost cost = training_cost(sc, 2000, dpu, transport);
    const TrainingRunResult r = run_training(sc);
    EXPECT_GE(cost.events, static_cast<double>(r.events)) << "dpu " << dpu;
    EXPECT_NE(cost.what.find("bound by rounds of"), std::string::npos) << cost.what;
    // A peer that leaves (here after the run ends) makes the round time unpredictable: then only
    // the compute bounds the steps, 50 times more of them. Without delayed updates the peers also
    // compute only between rounds; with them they compute all along, as both counts say.
    scenarios::Scenario leaving = sc;
    leaving.peers.back().leave_s = 1e6;
    const RunCost unbounded = training_cost(leaving, 2000, dpu, transport);
    EXPECT_NE(unbounded.what.find("bound by compute"), std::string::npos) << unbounded.what;
    EXPECT_GT(unbounded.events, (dpu ? 1.1 : 10) * cost.events) << "dpu " << dpu;
  }
}

}  // namespace
}  // namespace swarmlab::sim
