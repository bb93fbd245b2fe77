// Table 1 on ns-3 beside the fluid model. The default suite runs setup A (8 peers at 1 Gb/s, a few
// seconds) in process; the full table through the CLI is the slow test (label "slow").
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "run_cli.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"

namespace swarmlab::sim {
namespace {

TEST(Ns3Table1, SetupAIsWithin15PercentOfTheFluidModel) {
  const scenarios::Scenario sc = scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/A.json");
  for (const auto strategy : {core::averaging::Strategy::AllReduce, core::averaging::Strategy::ParameterServer,
                              core::averaging::Strategy::Planned}) {
    AveragingRunConfig cfg;
    cfg.strategy = strategy;
    cfg.rounds = 3;
    cfg.backend = "flow";
    const AveragingRunResult flow = run_averaging(sc, cfg);
    cfg.backend = "ns3";
    const AveragingRunResult ns3 = run_averaging(sc, cfg);
    EXPECT_EQ(ns3.backend, "ns3");
    ASSERT_EQ(ns3.rounds.size(), 3u);
    for (const auto& r : ns3.rounds) {
      EXPECT_EQ(r.failures, 0u);
      EXPECT_EQ(r.incomplete, 0u);
      EXPECT_DOUBLE_EQ(r.min_fraction_averaged, 1.0);
    }
    // The seam charges the same bytes whatever carries them.
    EXPECT_EQ(ns3.bytes_sent, flow.bytes_sent);
    EXPECT_LE(std::abs(ns3.mean_round_s - flow.mean_round_s) / flow.mean_round_s, 0.15)
        << ns3.strategy << ": ns3 " << ns3.mean_round_s << " s vs flow " << flow.mean_round_s << " s";
    // Packet-level TCP is never faster than the ideal fluid sharing it is compared with.
    EXPECT_GE(ns3.mean_round_s, 0.98 * flow.mean_round_s) << ns3.strategy;
  }
}

TEST(Ns3Table1, SimCommandWritesTheSameFilesOnBothBackends) {
  const std::string base = std::string(SWARMLAB_BINARY_DIR) + "/ns3_sim_command_test";
  for (const char* backend : {"flow", "ns3"}) {
    const auto r = cli::testing::run_swarmlab(std::string("sim ") + SWARMLAB_SOURCE_DIR +
                                              "/scenarios/table1/A.json --strategy ps --rounds 1 --quiet --backend " +
                                              backend + " --out " + base + "/" + backend);
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.out;
  }
  auto read = [&](const std::string& backend) {
    std::ifstream in(base + "/" + backend + "/results.json");
    return nlohmann::json::parse(in);
  };
  const auto flow = read("flow"), ns3 = read("ns3");
  EXPECT_EQ(ns3["backend"], "ns3");
  for (const auto& [key, value] : flow.items()) EXPECT_TRUE(ns3.contains(key)) << key;
  EXPECT_EQ(ns3["peers"].size(), flow["peers"].size());
  for (std::size_t i = 0; i < flow["peers"].size(); ++i)
    EXPECT_EQ(ns3["peers"][i]["bytes_sent"], flow["peers"][i]["bytes_sent"]);
  for (const char* file : {"rounds.csv", "trace.json"}) {
    std::ifstream in(base + "/ns3/" + file);
    EXPECT_TRUE(in.good()) << file;
    EXPECT_GT(std::string(std::istreambuf_iterator<char>(in), {}).size(), 50u) << file;
  }
}

// The whole table through the CLI, every cell within 15% of the fluid model's (minutes: "slow").
TEST(Ns3Table1Slow, EveryCellIsWithin15PercentOfTheFluidModel) {
  const auto flow = cli::testing::run_swarmlab("table1 --json --quiet");
  const auto ns3 = cli::testing::run_swarmlab("table1 --backend ns3 --json --quiet");
  ASSERT_EQ(flow.exit_code, 0) << flow.out;
  ASSERT_EQ(ns3.exit_code, 0) << ns3.out;
  const auto f = nlohmann::json::parse(flow.out), n = nlohmann::json::parse(ns3.out);
  EXPECT_EQ(n["backend"], "ns3");
  ASSERT_EQ(n["rows"].size(), f["rows"].size());
  for (std::size_t i = 0; i < f["rows"].size(); ++i)
    for (const char* k : {"AR", "PS", "Ours"}) {
      const double a = f["rows"][i][k], b = n["rows"][i][k];
      EXPECT_LE(std::abs(b - a) / a, 0.15) << "setup " << f["rows"][i]["setup"] << " " << k << ": ns3 " << b
                                           << " s vs flow " << a << " s";
    }
}

}  // namespace
}  // namespace swarmlab::sim
