// End to end: `swarmlab groupsize`, `swarmlab moshpit` and `swarmlab trace onoff`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace swarmlab::cli::testing {
namespace {

TEST(GroupsizeCommand, SixteenPeersWithRareFailuresAverageInOneGroup) {
  const CliResult r = run_swarmlab("groupsize --peers 16 --failure-rate 0.001 --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["group_size"], 16);
  EXPECT_TRUE(j["runner_up"].is_object());
  EXPECT_GT(j["runner_up"]["expected_rounds"].get<double>(), j["expected_rounds"].get<double>());
}

TEST(GroupsizeCommand, LargeCollaborationsShrinkGroupsAsFailuresGrow) {
  std::uint64_t previous = UINT64_MAX;
  for (const char* p : {"0.0001", "0.001", "0.01", "0.1", "0.5"}) {
    const CliResult r = run_swarmlab(std::string("groupsize --peers 4096 --failure-rate ") + p + " --json");
    ASSERT_EQ(r.exit_code, 0);
    const auto m = nlohmann::json::parse(r.out)["group_size"].get<std::uint64_t>();
    EXPECT_LE(m, previous) << "p = " << p;
    previous = m;
  }
  EXPECT_EQ(previous, 2u);  // frequent failures: pairwise averaging
}

TEST(GroupsizeCommand, BadArgumentsExitWith2) {
  EXPECT_EQ(run_swarmlab("groupsize --peers 1 --failure-rate 0.1").exit_code, 2);
  EXPECT_EQ(run_swarmlab("groupsize --peers 16 --failure-rate 1.5").exit_code, 2);
}

TEST(MoshpitCommand, A512PeerGridOfSide8ReachesTheExactAverageInThreeRounds) {
  const CliResult r = run_swarmlab("moshpit --peers 512 --group-size 8 --failure-rate 0 --rounds 10 --seed 1 --json");
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["rounds_to_target"]["moshpit"], 3);
  EXPECT_EQ(j["rounds_to_target"]["allreduce_restart"], 1);
  EXPECT_EQ(j["per_round"].size(), 10u);
}

TEST(MoshpitCommand, WithFailuresMoshpitStillConvergesAndIsDeterministic) {
  const std::string args = "moshpit --peers 512 --group-size 8 --failure-rate 0.01 --rounds 40 --seed 3 --json";
  const CliResult a = run_swarmlab(args), b = run_swarmlab(args);
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  const auto j = nlohmann::json::parse(a.out);
  ASSERT_TRUE(j["rounds_to_target"]["moshpit"].is_number());
  EXPECT_LE(j["rounds_to_target"]["moshpit"].get<int>(), 40);
  // Geometric convergence: the error after 12 rounds is far below 1e-4.
  EXPECT_LT(j["per_round"][11]["moshpit_mse"].get<double>(), 1e-4);
}

TEST(TraceCommand, OnOffTraceRoundTripsThroughTheLoaderFormat) {
  const CliResult r = run_swarmlab("trace onoff --peers a,b --on 8h --off 8h --duration 32h");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("peer,time_s,state"), std::string::npos);
  EXPECT_NE(r.out.find("a,28800,down"), std::string::npos);
  EXPECT_NE(r.out.find("b,57600,up"), std::string::npos);
  EXPECT_EQ(run_swarmlab("trace onoff --peers a --on -1h --off 8h --duration 32h").exit_code, 2);
}

}  // namespace
}  // namespace swarmlab::cli::testing
