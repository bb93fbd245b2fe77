// Valid scenarios: expansion, defaults, units, pair caps, traces and the Scenario helpers.
#include "scenarios/nat_traversal.h"
#include "scenarios/scenario_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "core/input_error.h"
#include "traces/text.h"

namespace swarmlab::scenarios {
namespace {

const char* kFull = R"({
  "name": "demo",
  "description": "two regions",
  "seed": 7,
  "workload": {"model": "resnet50", "parameters": 2.5557032e7, "wire_precision": "fp16-scaled", "target_batch": 32768},
  "peers": [
    {"name": "eu", "count": 3, "compute_sps": 400, "download_bps": "1 Gb/s", "upload_bps": 500e6, "latency_ms": "20ms"},
    {"name": "us", "count": 2, "compute_sps": 70, "bandwidth_bps": 200000000, "latency_ms": 40,
     "reachability": "client", "join_s": "1h", "leave_s": 7200, "failure_rate": 0.05},
    {"name": "relay", "compute_sps": 0, "bandwidth_bps": "2.5 Gbps"}
  ],
  "pair_caps": [
    {"from": "eu", "to": "us", "bps": "100 Mb/s", "symmetric": true},
    {"from": "relay", "to": "eu-0", "bps": 1e9}
  ],
  "averaging": {"strategy": "ps", "rounds": 100, "part_bytes": 65536, "ps_peer": "relay"}
})";

TEST(ScenarioLoader, LoadsEveryField) {
  const Scenario s = parse_scenario(kFull, "inline/demo.json");
  EXPECT_EQ(s.name, "demo");
  EXPECT_EQ(s.description, "two regions");
  EXPECT_EQ(s.source, "inline/demo.json");
  EXPECT_EQ(s.seed, 7u);
  EXPECT_EQ(s.workload.model, "resnet50");
  EXPECT_EQ(s.workload.parameters, 25557032u);
  EXPECT_EQ(s.workload.wire_precision, core::codec::Codec::Fp16Scaled);
  EXPECT_EQ(s.workload.target_batch, 32768u);

  ASSERT_EQ(s.peers.size(), 6u);
  const std::vector<std::string> names{"eu-0", "eu-1", "eu-2", "us-0", "us-1", "relay"};
  for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(s.peers[i].name, names[i]);
  EXPECT_EQ(s.peers[2].group, "eu");
  EXPECT_EQ(s.peers[5].group, "relay");
  EXPECT_EQ(s.peers[0].compute_sps, 400);
  EXPECT_EQ(s.peers[0].download_bps, 1e9);
  EXPECT_EQ(s.peers[0].upload_bps, 500e6);
  EXPECT_DOUBLE_EQ(s.peers[0].latency_s, 0.020);
  EXPECT_EQ(s.peers[0].reachability, Reachability::Public);
  EXPECT_FALSE(s.peers[0].join_s.has_value());
  EXPECT_EQ(s.peers[0].failure_rate, 0);
  EXPECT_EQ(s.peers[4].download_bps, 200e6);
  EXPECT_EQ(s.peers[4].upload_bps, 200e6);
  EXPECT_DOUBLE_EQ(s.peers[4].latency_s, 0.040);
  EXPECT_EQ(s.peers[4].reachability, Reachability::Client);
  EXPECT_EQ(s.peers[4].join_s, 3600.0);
  EXPECT_EQ(s.peers[4].leave_s, 7200.0);
  EXPECT_EQ(s.peers[4].failure_rate, 0.05);
  EXPECT_EQ(s.peers[5].compute_sps, 0);
  EXPECT_EQ(s.peers[5].download_bps, 2.5e9);
  EXPECT_EQ(s.peers[5].latency_s, 0);

  // eu x us both ways (3 * 2 * 2) and relay -> eu-0.
  ASSERT_EQ(s.pair_caps.size(), 13u);
  EXPECT_EQ(s.pair_caps[0], (PairCap{0, 3, 100e6}));
  EXPECT_EQ(s.pair_caps[1], (PairCap{3, 0, 100e6}));
  EXPECT_EQ(s.pair_caps.back(), (PairCap{5, 0, 1e9}));

  EXPECT_EQ(s.averaging.strategy, core::averaging::Strategy::ParameterServer);
  EXPECT_EQ(s.averaging.rounds, 100u);
  EXPECT_EQ(s.averaging.part_bytes, 65536u);
  EXPECT_EQ(s.averaging.ps_peer, std::optional<std::size_t>(5));
  EXPECT_TRUE(s.churn.empty());
  EXPECT_TRUE(s.bandwidth.empty());
}

TEST(ScenarioLoader, Defaults) {
  const Scenario s = parse_scenario(
      R"({"name": "min", "workload": {"model": "m", "parameters": 1, "target_batch": 1},
          "peers": [{"name": "solo", "compute_sps": 1, "bandwidth_bps": 1000}]})",
      "min.json");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.workload.wire_precision, core::codec::Codec::Fp16);
  ASSERT_EQ(s.peers.size(), 1u);
  EXPECT_EQ(s.peers[0].name, "solo");
  EXPECT_EQ(s.averaging.strategy, core::averaging::Strategy::Planned);
  EXPECT_EQ(s.averaging.rounds, 1u);
  EXPECT_EQ(s.averaging.part_bytes, 524288u);
  EXPECT_FALSE(s.averaging.ps_peer.has_value());
  EXPECT_FALSE(s.averaging.centered_clip.has_value());
  EXPECT_TRUE(s.pair_caps.empty());
}

TEST(ScenarioLoader, CenteredClipTakesItsRadiusAndDefaultIterations) {
  const Scenario s = parse_scenario(
      R"({"name": "clip", "workload": {"model": "m", "parameters": 1, "target_batch": 1},
          "peers": [{"name": "solo", "compute_sps": 1, "bandwidth_bps": 1000}],
          "averaging": {"centered_clip": {"tau": 0.25}}})",
      "clip.json");
  ASSERT_TRUE(s.averaging.centered_clip.has_value());
  EXPECT_EQ(s.averaging.centered_clip->tau, 0.25);
  EXPECT_EQ(s.averaging.centered_clip->iterations, 20u);
  // The simulated processor time of the clip defaults to the measured one (docs/trust.md §3).
  EXPECT_EQ(s.averaging.clip_cost.clip_median_s_per_value, 2.82e-9);
  EXPECT_EQ(s.averaging.clip_cost.clip_iteration_s_per_value, 0.692e-9);
}

TEST(ScenarioLoader, CenteredClipTakesItsProcessorTime) {
  const Scenario s = parse_scenario(
      R"({"name": "clip", "workload": {"model": "m", "parameters": 1, "target_batch": 1},
          "peers": [{"name": "solo", "compute_sps": 1, "bandwidth_bps": 1000}],
          "averaging": {"centered_clip": {"median_s_per_value": 1e-8, "iteration_s_per_value": 0}}})",
      "clip.json");
  EXPECT_EQ(s.averaging.clip_cost.clip_median_s_per_value, 1e-8);
  EXPECT_EQ(s.averaging.clip_cost.clip_iteration_s_per_value, 0.0);
}

TEST(ScenarioLoader, CountOfOneStillSuffixes) {
  const Scenario s = parse_scenario(
      R"({"name": "n", "workload": {"model": "m", "parameters": 1, "target_batch": 1},
          "peers": [{"name": "g", "count": 1, "compute_sps": 1, "bandwidth_bps": 1000}]})",
      "n.json");
  EXPECT_EQ(s.peers.at(0).name, "g-0");
}

TEST(ScenarioLoader, FindPeer) {
  const Scenario s = parse_scenario(kFull, "demo.json");
  EXPECT_EQ(s.find_peer("us-1"), std::optional<std::size_t>(4));
  EXPECT_EQ(s.find_peer("relay"), std::optional<std::size_t>(5));
  EXPECT_FALSE(s.find_peer("us").has_value());  // a group, not a peer
  EXPECT_FALSE(s.find_peer("nobody").has_value());
}

TEST(ScenarioLoader, EnumNamesRoundTripThroughTheirOneTable) {
  EXPECT_EQ(core::codec::name(core::codec::Codec::Fp16Scaled), "fp16-scaled");
  EXPECT_EQ(core::codec::name(core::codec::Codec::Uint8Uniform), "uint8");
  EXPECT_EQ(core::name_of(kReachabilityNames, Reachability::Client), "client");
  EXPECT_EQ(core::averaging::name(core::averaging::Strategy::Planned), "ours");
  EXPECT_EQ(core::averaging::label(core::averaging::Strategy::Planned), "Ours");
  EXPECT_EQ(core::name_of(kCoordinationNames, Coordination::Oracle), "oracle");
  for (const auto& n : core::averaging::kStrategyNames)
    EXPECT_EQ(core::parse_name(core::averaging::kStrategyNames, n.name), n.value);
  for (const auto& n : core::codec::kCodecNames) EXPECT_EQ(core::codec::parse_codec(n.name), n.value);
  EXPECT_FALSE(core::parse_name(core::training::kModeNames, "exact").has_value());
}

// A scenario with traces, written to a temporary folder; trace paths are relative to it.
class ScenarioWithTraces : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(SWARMLAB_BINARY_DIR) / "scenario_loader_test" /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_ / "traces");
    write("traces/churn.csv", "peer,time_s,state\nw-1,0,down\nw-1,100,up\nw-0,500,down\n");
    write("traces/bw.csv", "peer,time_s,download_bps,upload_bps\nw-0,50,1e6,2e6\n");
    write("s.json", R"({"name": "t", "workload": {"model": "m", "parameters": 1, "target_batch": 1},
      "peers": [{"name": "w", "count": 2, "compute_sps": 1, "bandwidth_bps": 1e9, "join_s": 10, "leave_s": 1000}],
      "churn_trace": "traces/churn.csv", "bandwidth_trace": "traces/bw.csv"})");
  }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
};

TEST_F(ScenarioWithTraces, ResolvesTracesRelativeToTheScenario) {
  const Scenario s = load_scenario((dir_ / "s.json").string());
  EXPECT_EQ(s.churn.events.size(), 3u);
  EXPECT_EQ(s.churn_trace_path, (dir_ / "traces/churn.csv").lexically_normal().string());
  EXPECT_EQ(s.bandwidth.events.size(), 1u);

  // peer_up: join/leave window AND the churn trace.
  EXPECT_FALSE(s.peer_up(0, 5));  // before join_s
  EXPECT_TRUE(s.peer_up(0, 10));
  EXPECT_FALSE(s.peer_up(0, 500));  // churned down
  EXPECT_FALSE(s.peer_up(1, 50));   // down from 0 to 100
  EXPECT_TRUE(s.peer_up(1, 100));
  EXPECT_FALSE(s.peer_up(1, 1000));  // left

  EXPECT_EQ(s.peer_bandwidth(0, 49), (std::pair<double, double>(1e9, 1e9)));
  EXPECT_EQ(s.peer_bandwidth(0, 50), (std::pair<double, double>(1e6, 2e6)));
  EXPECT_EQ(s.peer_bandwidth(1, 50), (std::pair<double, double>(1e9, 1e9)));
}

TEST_F(ScenarioWithTraces, TracePeersMustBeScenarioPeers) {
  write("traces/churn.csv", "peer,time_s,state\nw-0,0,up\nw,5,down\n");
  try {
    load_scenario((dir_ / "s.json").string());
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.source(), (dir_ / "traces/churn.csv").lexically_normal().string());
    EXPECT_EQ(e.location(), "line 3");
    EXPECT_THAT(e.what(), ::testing::HasSubstr("unknown peer \"w\""));
  }
}

// The full example in scenarios/README.md loads (the documentation stays true).
TEST(ScenarioReadme, ExampleLoads) {
  const std::string readme =
      traces::read_text_file(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/README.md", 1 << 20);
  const auto start = readme.find("```json\n");
  ASSERT_NE(start, std::string::npos);
  const auto end = readme.find("```", start + 8);
  ASSERT_NE(end, std::string::npos);
  const Scenario s = parse_scenario(readme.substr(start + 8, end - start - 8),
                                    std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/README.md");
  EXPECT_FALSE(s.peers.empty());
}

}  // namespace
}  // namespace swarmlab::scenarios

namespace swarmlab::scenarios {
namespace {

constexpr const char* kNatScenario = R"({"name": "nat", "seed": 7,
    "workload": {"model": "m", "parameters": 1, "target_batch": 1},
    "peers": [{"name": "lab", "count": 2, "compute_sps": 1, "bandwidth_bps": 1000},
              {"name": "home", "count": 40, "compute_sps": 1, "bandwidth_bps": 1000, "reachability": "client"},
              {"name": "fixed", "compute_sps": 1, "bandwidth_bps": 1000, "reachability": "client", "nat": "symmetric"}],
    "nat_traversal": {"relays": "public", "hole_punching": true}})";

TEST(ScenarioLoader, NatTraversalNamesRelaysAndDrawsNatTypesFromTheSeed) {
  const Scenario s = parse_scenario(kNatScenario, "nat.json");
  ASSERT_TRUE(s.nat_traversal.has_value());
  EXPECT_EQ(s.nat_traversal->relays, (std::vector<std::size_t>{0, 1}));
  EXPECT_TRUE(s.nat_traversal->hole_punching);
  EXPECT_EQ(s.nat_traversal->cone_share, 0.64);
  const core::relay::ReachabilityConfig c = reachability_config(s);
  ASSERT_EQ(c.nat.size(), 43u);
  EXPECT_EQ(c.nat[0], core::relay::Nat::None);
  EXPECT_EQ(c.nat[42], core::relay::Nat::Symmetric);  // as given
  std::size_t cones = 0;
  for (auto n : c.nat) cones += n == core::relay::Nat::Cone;
  EXPECT_GT(cones, 15u);  // about 0.64 x 40
  EXPECT_LT(cones, 36u);
  EXPECT_EQ(c.relays.size(), 2u);
  EXPECT_EQ(c.relays[1].upload_bps, 1000);
  // The same seed draws the same NATs; another seed other ones.
  EXPECT_EQ(reachability_config(parse_scenario(kNatScenario, "nat.json")).nat, c.nat);
  std::string other = kNatScenario;
  other.replace(other.find("\"seed\": 7"), 9, "\"seed\": 8");
  EXPECT_NE(reachability_config(parse_scenario(other, "nat.json")).nat, c.nat);
}

}  // namespace
}  // namespace swarmlab::scenarios
