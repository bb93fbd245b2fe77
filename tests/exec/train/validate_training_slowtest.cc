// Training fidelity (issue 12): `validate --train` on two compositions of link speeds - the 4-peer
// scenario's links (100/50/50/20 Mb/s) and the same at a fifth of the rate - with the compute
// speeds the peers measured live given to the simulation (exec/validate_training.h). Steps per hour
// within 15%, averaging time per step within 20%. The twin simulates every round (no replay, which
// counts rounds from the last member's start). Measured 1.036-1.085 / 0.873-0.918 at the
// scenario's links and 1.021-1.028 / 0.954-0.970 at a fifth (exec/README.md, "After
// docs/interpretations.md §29"). Needs emulated links.
#include <gtest/gtest.h>

#include <cstdio>

#include "exec/link_emulator.h"
#include "exec/validate_training.h"
#include "live_swarm.h"

namespace swarmlab::exec {
namespace {

void expect_fidelity(double scale) {
  testing::TempDir dir;
  TrainingValidateOptions o;
  o.scenario_path = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/live/fashion-mnist-4.json";
  o.train.model = "cnn";
  o.train.steps = 120;
  o.train.evaluate_every = 0;
  o.scale = scale;
  o.out_dir = dir.path;
  o.executable = std::string(SWARMLAB_BINARY_DIR) + "/swarmlab";
  o.deadline_s = 400;
  const TrainingValidateResult r = validate_training(o);
  EXPECT_TRUE(r.live_ok) << "see " << dir.path;
  ASSERT_EQ(r.metrics.size(), 3u);
  for (const auto& m : r.metrics) {
    std::printf("scale %.2f: %s predicted %.3f measured %.3f ratio %.3f\n", scale, m.name.c_str(), m.predicted, m.measured, m.ratio());
    if (m.name == "samples_per_step") continue;  // reported, not claimed (exec/README.md)
    const double bound = m.name == "round_s" ? 0.20 : 0.15;
    EXPECT_NEAR(m.ratio(), 1.0, bound) << m.name << " at scale " << scale << ", see " << dir.path;
  }
}

TEST(ValidateTrainingSlow, StepsPerHourWithin15PercentAndRoundTimeWithin20PercentAtTwoLinkSpeeds) {
  if (const std::string why = LinkEmulator::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  expect_fidelity(1.0);
  expect_fidelity(0.2);
}

}  // namespace
}  // namespace swarmlab::exec
