// swarmlab robust end to end: real Fashion-MNIST gradients, simulated peers (docs/trust.md §3).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace swarmlab::cli {
namespace {

using testing::run_swarmlab;

const nlohmann::json* find_run(const nlohmann::json& j, const std::string& attack, std::size_t attackers, bool clip) {
  for (const auto& r : j["runs"])
    if (r["attack"] == attack && r["attackers"] == attackers && r["centered_clip"] == clip) return &r;
  return nullptr;
}

TEST(RobustCommand, TrainingWithSevenOfSixteenSignFlippersConvergesWithCenteredClip) {
  const auto r = run_swarmlab("robust --attacks sign-flip,noise --attackers 7 --steps 60 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto* baseline = find_run(j, "none", 0, false);
  const auto* flipped = find_run(j, "sign-flip", 7, true);
  const auto* noise_mean = find_run(j, "noise", 7, false);
  const auto* noise_clip = find_run(j, "noise", 7, true);
  ASSERT_TRUE(baseline && flipped && noise_mean && noise_clip) << r.out;
  // Softmax regression reaches about 0.78 in 60 steps of 1,024 samples without attackers; with the
  // clip and seven sign-flippers it still learns (ten classes: chance is 0.1).
  EXPECT_GT((*baseline)["test_accuracy"].get<double>(), 0.72);
  EXPECT_GT((*flipped)["test_accuracy"].get<double>(), 0.65);
  EXPECT_LT((*flipped)["final_train_loss"].get<double>(), 1.0);  // from ln 10 = 2.30
  // Seven attackers adding noise of 10 × the gradient's norm: the mean is pushed far off, the
  // clip holds the average near the honest one.
  EXPECT_GT((*noise_mean)["mean_relative_distance"].get<double>(), 1.4);  // √7 · 10 / 16 = 1.65
  EXPECT_LT((*noise_clip)["mean_relative_distance"].get<double>(), 0.5);
  EXPECT_GT((*noise_clip)["test_accuracy"].get<double>(), (*noise_mean)["test_accuracy"].get<double>());
}

TEST(RobustCommand, WritesTablesAndThePlot) {
  const auto dir = std::filesystem::path(SWARMLAB_BINARY_DIR) / "robust_command_test";
  std::filesystem::remove_all(dir);
  const auto r = run_swarmlab("robust --attacks bias --attackers 2 --steps 5 --out " + dir.string(), true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream csv(dir / "robustness.csv");
  std::string header, line;
  std::getline(csv, header);
  std::size_t rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 4u);  // no attack and bias x2, each with the mean and with the clip
  EXPECT_TRUE(std::filesystem::exists(dir / "loss.csv"));
  EXPECT_TRUE(std::filesystem::exists(dir / "robustness.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "robustness.png")) << r.out;
}

TEST(RobustCommand, BadInputNamesTheFieldAndExitsWithTwo) {
  auto r = run_swarmlab("robust --attackers 16 --steps 1", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--attackers"), std::string::npos) << r.out;
  r = run_swarmlab(std::string("robust ") + SWARMLAB_SOURCE_DIR + "/scenarios/faults/butterfly-16-crash.json --steps 1", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("workload.parameters"), std::string::npos) << r.out;
  r = run_swarmlab("robust --data /nonexistent --steps 1", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("/nonexistent"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace swarmlab::cli
