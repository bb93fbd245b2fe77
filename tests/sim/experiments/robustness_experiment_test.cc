// The robustness experiment on a model with a known answer: least squares towards per-sample
// targets, so that honest gradients are real and their spread is known (docs/trust.md §3).
#include "sim/experiments/robustness_experiment.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/rng.h"
#include "scenarios/scenario_loader.h"

namespace swarmlab::sim {
namespace {

constexpr std::size_t kDims = 1600;  // 100 per span with 16 equal members
constexpr std::uint32_t kSamples = 4096;

// Sample i asks for the point 1 + u_i (u_i ~ N(0, 0.5²) per coordinate); loss ½‖x − 1 − u_i‖².
struct LeastSquares {
  std::vector<float> offsets = [] {
    core::Rng rng(99);
    std::vector<float> u(std::size_t{kSamples} * kDims);
    for (auto& v : u) v = static_cast<float>(0.5 * rng.normal());
    return u;
  }();

  RobustnessModel model() const {
    RobustnessModel m;
    m.initial.assign(kDims, 0.0f);
    m.samples = kSamples;
    m.gradient = [this](std::span<const float> x, std::span<const std::uint32_t> batch, std::span<float> g) {
      double loss = 0;
      std::fill(g.begin(), g.end(), 0.0f);
      for (std::uint32_t i : batch)
        for (std::size_t k = 0; k < kDims; ++k) {
          const float r = x[k] - 1.0f - offsets[std::size_t{i} * kDims + k];
          g[k] += r / static_cast<float>(batch.size());
          loss += 0.5 * r * r / static_cast<double>(batch.size());
        }
      return loss;
    };
    return m;
  }
};

scenarios::Scenario scenario() {
  auto sc = scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/robust/fashion-mnist-16.json");
  sc.workload.parameters = kDims;
  return sc;
}

RobustnessResult run(std::size_t attackers, Attack attack, bool clip, std::uint64_t steps = 30) {
  static const LeastSquares problem;
  RobustnessSetup s;
  s.attackers = attackers;
  s.attack = attack;
  if (clip) s.clip = core::averaging::CenteredClip{1.0, 20};
  else s.no_clip = true;
  s.steps = steps;
  s.learning_rate = 0.3;
  return run_robustness(scenario(), problem.model(), s);
}

TEST(RobustnessExperiment, WithoutAttackersTheAverageIsTheHonestMean) {
  const RobustnessResult r = run(0, Attack::SignFlip, false);
  EXPECT_EQ(r.steps, 30u);
  ASSERT_EQ(r.relative_distance.size(), 30u);
  for (double d : r.relative_distance) EXPECT_LT(d, 1e-5);
  EXPECT_LT(r.train_loss.back(), 0.2 * r.train_loss.front());
  EXPECT_EQ(r.clipped, 0u);
}

TEST(RobustnessExperiment, CenteredClipHoldsSevenSignFlippersNearTheHonestMean) {
  const RobustnessResult mean = run(7, Attack::SignFlip, false);
  const RobustnessResult clipped = run(7, Attack::SignFlip, true);
  // The mean lands at (9 - 7) / 16 of the honest gradient: 7/8 of it away.
  EXPECT_NEAR(mean.relative_distance.front(), 0.875, 0.05);
  EXPECT_LT(clipped.relative_distance.front(), 0.3);
  EXPECT_GT(clipped.clipped, 0u);
  // Training still converges with the clip, and faster than with the mean.
  EXPECT_LT(clipped.train_loss.back(), 0.3 * clipped.train_loss.front());
  EXPECT_LT(clipped.train_loss.back(), mean.train_loss.back());
}

TEST(RobustnessExperiment, LargeNoiseAndBiasAreBoundedByTheClip) {
  for (const Attack a : {Attack::Noise, Attack::Bias}) {
    const RobustnessResult mean = run(5, a, false, 5);
    const RobustnessResult clipped = run(5, a, true, 5);
    // Five attackers of sixteen, each 10 × the gradient's norm off: bias adds up (3.1), noise
    // only as √5 (1.4).
    EXPECT_GT(mean.relative_distance.front(), 1.2) << name(a);
    EXPECT_LT(clipped.relative_distance.front(), 0.3) << name(a);
  }
}

TEST(RobustnessExperiment, DropOutAttackersLeaveTheirSpansUnaveraged) {
  // Three attackers leave every round after sending: their three spans of sixteen come back to
  // nobody, so the survivors zero them (docs/interpretations.md §26), and the run goes on.
  const RobustnessResult r = run(3, Attack::DropOut, false, 10);
  EXPECT_EQ(r.steps, 10u);
  EXPECT_NEAR(r.relative_distance.front(), std::sqrt(3.0 / 16), 0.1);
}

TEST(RobustnessExperiment, TheSameSetupGivesTheSameBits) {
  const RobustnessResult a = run(5, Attack::LittleIsEnough, true, 10), b = run(5, Attack::LittleIsEnough, true, 10);
  EXPECT_EQ(a.relative_distance, b.relative_distance);
  EXPECT_EQ(a.parameters, b.parameters);
}

TEST(RobustnessExperiment, RefusesAModelOfAnotherSizeAndNoHonestPeer) {
  static const LeastSquares problem;
  auto sc = scenario();
  sc.workload.parameters = 10;
  EXPECT_THROW(run_robustness(sc, problem.model(), {}), std::invalid_argument);
  RobustnessSetup all;
  all.attackers = 16;
  EXPECT_THROW(run_robustness(scenario(), problem.model(), all), std::invalid_argument);
}

TEST(Attacks, LittleIsEnoughPicksZFromPeersAndAttackers) {
  // n = 16: s = 9 - m, z = Φ⁻¹((7 + m) / 16).
  EXPECT_DOUBLE_EQ(little_is_enough_z(16, 1), 0.0);
  EXPECT_NEAR(little_is_enough_z(16, 7), 1.1503, 1e-3);  // Φ⁻¹(0.875)
  EXPECT_NEAR(little_is_enough_z(16, 3), 0.3186, 1e-3);  // Φ⁻¹(0.625)
}

TEST(Attacks, EachAttackCraftsWhatItSays) {
  const std::vector<float> own = {1, -2, 3, 0};
  HonestEstimate honest{{1, 1, 1, 1}, {0.5, 0.5, 0.5, 0.5}};
  core::Rng rng(1);
  std::vector<float> out(4);
  craft_attack(Attack::SignFlip, own, honest, 16, 2, rng, out);
  EXPECT_EQ(out, (std::vector<float>{-1, 2, -3, 0}));
  craft_attack(Attack::Bias, own, honest, 16, 2, rng, out);
  std::vector<float> again(4);
  craft_attack(Attack::Bias, std::vector<float>(4, 0.0f), honest, 16, 2, rng, again);
  double shift = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_FLOAT_EQ(out[k] - own[k], again[k]);  // the same vector, whatever the gradient
    shift += again[k] * again[k];
  }
  EXPECT_NEAR(std::sqrt(shift), 10 * 2.0, 1e-4);  // 10 × ‖μ‖ = 10 × 2
  craft_attack(Attack::LittleIsEnough, own, honest, 16, 7, rng, out);
  for (float v : out) EXPECT_NEAR(v, 1 - 0.5 * 1.1503, 1e-3);
  craft_attack(Attack::DropOut, own, honest, 16, 2, rng, out);
  EXPECT_EQ(out, own);
}

}  // namespace
}  // namespace swarmlab::sim
