// End to end: `swarmlab sim` writes its three files, deterministically, and refuses bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace swarmlab::cli::testing {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SimCommand, WritesResultsCsvAndAPerfettoTraceByteIdenticallyTwice) {
  const fs::path base = fs::temp_directory_path() / "swarmlab_sim_test";
  fs::remove_all(base);
  const std::string scenario = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/C.json";
  for (const char* run : {"one", "two"}) {
    const CliResult r = run_swarmlab("sim " + scenario + " --rounds 2 --quiet --out " + (base / run).string());
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  for (const char* file : {"results.json", "rounds.csv", "trace.json"}) {
    const std::string a = slurp(base / "one" / file), b = slurp(base / "two" / file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_EQ(a, b) << file << " differs between two runs of the same scenario and seed";
  }
  // Chrome trace-event format: a traceEvents array of complete ("X") events with one track per peer.
  const auto trace = nlohmann::json::parse(slurp(base / "one" / "trace.json"));
  ASSERT_TRUE(trace["traceEvents"].is_array());
  std::set<int> tracks;
  std::set<std::string> categories;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      tracks.insert(e["tid"].get<int>());
      categories.insert(e["cat"].get<std::string>());
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  }
  EXPECT_EQ(tracks.size(), 24u);
  EXPECT_TRUE(categories.count("transfer"));
  EXPECT_TRUE(categories.count("reduce"));
  EXPECT_TRUE(categories.count("averaging"));
  const auto results = nlohmann::json::parse(slurp(base / "one" / "results.json"));
  EXPECT_EQ(results["per_round"].size(), 2u);
  fs::remove_all(base);
}

TEST(SimCommand, CarriesRealValuesAndChecksTheAverage) {
  // A small scenario with real vectors: the averaged values must equal the exact weighted average.
  const fs::path dir = fs::temp_directory_path() / "swarmlab_sim_values";
  fs::create_directories(dir);
  std::ofstream(dir / "small.json") << R"({
    "name": "small", "seed": 3,
    "workload": {"model": "toy", "parameters": 200000, "wire_precision": "fp32", "target_batch": 64},
    "peers": [{"name": "gpu", "count": 5, "compute_sps": 10, "bandwidth_bps": 1e8, "latency_ms": 1},
              {"name": "aux", "compute_sps": 0, "bandwidth_bps": 5e8, "latency_ms": 1}],
    "averaging": {"strategy": "ours", "rounds": 2}
  })";
  const CliResult r = run_swarmlab("sim " + (dir / "small.json").string() + " --values --quiet --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto results = nlohmann::json::parse(slurp(dir / "out" / "results.json"));
  for (const auto& round : results["per_round"]) {
    EXPECT_LT(round["max_abs_error"].get<double>(), 1e-5);
    EXPECT_EQ(round["fraction_averaged_min"].get<double>(), 1.0);
  }
  fs::remove_all(dir);
}

TEST(SimCommand, MalformedScenarioExitsWith2AndNamesTheProblem) {
  const fs::path dir = fs::temp_directory_path() / "swarmlab_sim_bad";
  fs::create_directories(dir);
  std::ofstream(dir / "bad.json") << R"({"name": "bad", "workload": {"model": "x", "parameters": 10,
    "wire_precision": "fp32", "target_batch": 1}, "peers": [{"name": "a", "compute_sps": 1,
    "download_bps": -5, "upload_bps": 1}]})";
  const CliResult r = run_swarmlab("sim " + (dir / "bad.json").string() + " --quiet", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("bad.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("download_bps"), std::string::npos) << r.out;
  EXPECT_EQ(run_swarmlab("sim " + (dir / "missing.json").string()).exit_code, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace swarmlab::cli::testing

namespace swarmlab::cli::testing {
namespace {

TEST(SimCommand, ADhtOnlyScenarioRunsTheDhtExperiment) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "swarmlab_sim_dht";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "dht.json") << R"({"name": "small-dht", "seed": 2, "dht": {"peers": 60, "hours": 0.1}})";
  const CliResult r = run_swarmlab("sim " + (dir / "dht.json").string() + " --quiet --out " + (dir / "out").string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::ifstream in(dir / "out" / "results.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["scenario"], "small-dht");
  EXPECT_EQ(j["get_success_rate"], 1.0);
  // A DHT-only scenario may not also describe training peers.
  std::ofstream(dir / "both.json") << R"({"name": "x", "dht": {"peers": 60}, "workload": {"model": "m",
    "parameters": 1, "target_batch": 1}})";
  EXPECT_EQ(run_swarmlab("sim " + (dir / "both.json").string() + " --quiet").exit_code, 2);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace swarmlab::cli::testing
