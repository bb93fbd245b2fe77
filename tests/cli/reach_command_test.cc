// swarmlab reach end to end on the shipped 70% client-mode scenario (docs/trust.md §4).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace swarmlab::cli {
namespace {

using testing::run_swarmlab;

TEST(ReachCommand, RelaysWithHolePunchingBeatClientModeAloneOnTheShippedScenario) {
  const auto dir = std::filesystem::path(SWARMLAB_BINARY_DIR) / "reach_command_test";
  std::filesystem::remove_all(dir);
  const auto r = run_swarmlab("reach --hours 1 --json --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["peers"], 20);
  EXPECT_EQ(j["client_peers"], 14);
  ASSERT_EQ(j["variants"].size(), 4u);
  const auto& alone = j["variants"][0];
  const auto& both = j["variants"][3];
  EXPECT_EQ(alone["name"], "client mode alone");
  EXPECT_EQ(alone["relayed_gb"].get<double>(), 0.0);
  EXPECT_EQ(both["name"], "relays + hole punching");
  EXPECT_GT(both["vs_client_mode_alone"].get<double>(), 1.1);
  EXPECT_GT(both["client_share"].get<double>(), 0.5);
  EXPECT_GT(both["relayed_gb"].get<double>(), 1.0);
  for (const auto& v : j["variants"]) EXPECT_GE(v["vs_client_mode_alone"].get<double>(), 1.0) << v["name"];
  std::ifstream written(dir / "reach.json");
  EXPECT_EQ(nlohmann::json::parse(written), j);
}

TEST(ReachCommand, AScenarioWithoutClientPeersExitsWithTwo) {
  const auto r = run_swarmlab(std::string("reach ") + SWARMLAB_SOURCE_DIR + "/scenarios/table1/A.json --hours 0.1", true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("reachability \"client\""), std::string::npos) << r.out;
}

}  // namespace
}  // namespace swarmlab::cli
