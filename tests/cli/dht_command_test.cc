// End to end: `swarmlab dht`.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace swarmlab::cli::testing {
namespace {

TEST(DhtCommand, JsonReportsTheAcceptanceMetricsAndIsDeterministic) {
  const std::string args = "dht --peers 120 --churn-per-hour 0.2 --hours 0.1 --seed 4 --json";
  const CliResult a = run_swarmlab(args), b = run_swarmlab(args);
  ASSERT_EQ(a.exit_code, 0);
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_GE(ja["get_success_rate"].get<double>(), 0.0);
  EXPECT_LE(ja["get_success_rate"].get<double>(), 1.0);
  for (const char* k : {"median", "p99", "histogram"}) EXPECT_TRUE(ja["hops"].contains(k)) << k;
  for (const char* k : {"median", "p99"}) EXPECT_TRUE(ja["lookup_latency_s"].contains(k)) << k;
  for (const char* k : {"messages_per_peer_minute", "bytes_per_peer_minute", "routing"})
    EXPECT_TRUE(ja.contains(k)) << k;
  EXPECT_TRUE(ja["routing"].contains("alive_fraction"));
  EXPECT_TRUE(ja["routing"].contains("mean_entries"));
  // Same seed, byte-identical output: no wall-clock figure in it.
  EXPECT_FALSE(ja.contains("wall_s"));
  EXPECT_EQ(a.out, b.out);
}

TEST(DhtCommand, TextOutputAndBadArguments) {
  const CliResult r = run_swarmlab("dht --peers 50 --hours 0.05");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("gets of live keys"), std::string::npos);
  EXPECT_EQ(run_swarmlab("dht --peers 1").exit_code, 2);
  EXPECT_EQ(run_swarmlab("dht --peers 100 --churn-per-hour -1").exit_code, 2);
  EXPECT_EQ(run_swarmlab("dht --peers 100 --dht kademlia").exit_code, 2);
  EXPECT_EQ(run_swarmlab("dht --peers 100 --bucket-size 1").exit_code, 2);
  EXPECT_EQ(run_swarmlab("dht --peers 100 --bucket-size 257").exit_code, 2);
}

// Hydra's configuration (docs/hydra.md §1): the same experiment on 256-bit ids, with its lists'
// size M; deterministic like the default.
TEST(DhtCommand, HydraConfigurationRunsOn256BitIds) {
  const std::string args = "dht --peers 120 --churn-per-hour 0.5 --hours 0.1 --seed 4 --dht hydra --bucket-size 8 --json";
  const CliResult a = run_swarmlab(args), b = run_swarmlab(args);
  ASSERT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  const auto hydra = nlohmann::json::parse(a.out);
  EXPECT_EQ(hydra["id_bits"], 256);
  EXPECT_EQ(hydra["bucket_size"], 8);
  EXPECT_GT(hydra["gets"]["completed"].get<int>(), 0);
  EXPECT_GT(hydra["get_success_rate"].get<double>(), 0.95);
  const auto hivemind = nlohmann::json::parse(run_swarmlab("dht --peers 120 --churn-per-hour 0.5 --hours 0.1 --seed 4 --bucket-size 8 --json").out);
  EXPECT_EQ(hivemind["id_bits"], 160);
  // 12 more bytes per id on the wire, and lists that ping at once.
  EXPECT_GT(hydra["bytes_per_peer_minute"].get<double>(), hivemind["bytes_per_peer_minute"].get<double>());
}

}  // namespace
}  // namespace swarmlab::cli::testing
