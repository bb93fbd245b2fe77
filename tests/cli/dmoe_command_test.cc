// swarmlab dmoe end to end (docs/learning-at-home.md §8): the throughput curves and their files,
// the internet-scale run at a small size, and bad arguments.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace swarmlab::cli {
namespace {

using testing::run_swarmlab;

TEST(DmoeCommand, ThroughputWritesTheCurvesTheirTableAndAPlot) {
  const auto dir = std::filesystem::path(SWARMLAB_BINARY_DIR) / "dmoe_command_test";
  std::filesystem::remove_all(dir);
  const auto r = run_swarmlab("dmoe throughput --block ffn --delays-ms 0,200 --measure-s 300 --json --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["experiments"].size(), 1u);
  const auto& e = j["experiments"][0];
  EXPECT_EQ(e["block"], "feed-forward");
  EXPECT_EQ(e["blocks"], 224);
  EXPECT_EQ(e["trainers"], 64);
  ASSERT_EQ(e["points"].size(), 2u);
  EXPECT_GT(e["dmoe_retained"].get<double>(), 0.8);
  EXPECT_LT(e["model_parallel_retained"].get<double>(), 0.2);
  std::ifstream written(dir / "dmoe_throughput.json");
  const auto file = nlohmann::json::parse(written);
  EXPECT_EQ(file["experiments"], j["experiments"]);
  std::ifstream csv(dir / "dmoe_throughput.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "block,mean_delay_ms,method,samples_per_s");
  // The plot needs matplotlib, which setup.sh installs; the JSON says what happened either way.
  ASSERT_TRUE(j.contains("plot"));
  if (j["plot"].get<std::string>().rfind("plot written", 0) == 0) EXPECT_TRUE(std::filesystem::exists(dir / "dmoe_throughput.png"));
}

TEST(DmoeCommand, SwarmReportsSearchTrainingTrafficAndChurn) {
  const auto r = run_swarmlab("dmoe swarm --runtimes 200 --trainers 8 --grid-side 16 --hours 0.05 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runtimes"], 200);
  EXPECT_GT(j["training"]["batches"].get<int>(), 0);
  EXPECT_GE(j["beam_search"]["found_k_share"].get<double>(), 0.99);
  EXPECT_LE(j["beam_search"]["max_lookups"].get<int>(), 5);
  EXPECT_GT(j["dht"]["messages_per_peer_minute"].get<double>(), 0);
  EXPECT_EQ(j["announce_period_s"], 600.0);
  // Deterministic output: no wall time in it.
  EXPECT_FALSE(j.contains("wall_s"));
  const auto again = run_swarmlab("dmoe swarm --runtimes 200 --trainers 8 --grid-side 16 --hours 0.05 --json");
  EXPECT_EQ(again.out, r.out);
}

TEST(DmoeCommand, BadArgumentsExitWithTwoAndSayWhy) {
  auto r = run_swarmlab("dmoe throughput --delays-ms 10,200", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--delays-ms"), std::string::npos) << r.out;
  r = run_swarmlab("dmoe swarm --runtimes 100000 --grid-side 8", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("grid"), std::string::npos) << r.out;
  r = run_swarmlab("dmoe", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  r = run_swarmlab("dmoe swarm --packet-loss 0.9", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--packet-loss"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace swarmlab::cli
