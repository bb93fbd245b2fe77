// The scenario files shipped under scenarios/: every one loads, and the DeDLOC setups
// (docs/dedloc.md §6) have the published shape.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "scenarios/dmoe_live.h"
#include "scenarios/scenario_loader.h"

namespace swarmlab::scenarios {
namespace {

const std::string kScenarios = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/";

Scenario load(const std::string& relative) { return load_scenario(kScenarios + relative); }

std::size_t count_group(const Scenario& s, const std::string& group) {
  std::size_t n = 0;
  for (const auto& p : s.peers) n += p.group == group;
  return n;
}

// Sweep specs (a base and axes, sweep/README.md) sit beside their base scenarios; tests/sweep loads them.
bool is_sweep_spec(const std::filesystem::path& p) {
  std::ifstream in(p);
  const auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() && j.contains("axes") && j.contains("base");
}

TEST(ShippedScenarios, EveryJsonFileLoads) {
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(kScenarios)) {
    if (entry.path().extension() != ".json" || is_sweep_spec(entry.path())) continue;
    ++files;
    // A live Learning@home run has its own format (scenarios/dmoe_live.h).
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (is_dmoe_live(text)) {
      EXPECT_NO_THROW({
        const DmoeLiveScenario d = load_dmoe_live(text, entry.path().string());
        EXPECT_FALSE(d.description.empty()) << entry.path();
      }) << entry.path();
      continue;
    }
    EXPECT_NO_THROW({
      const Scenario s = load_scenario(entry.path().string());
      EXPECT_FALSE(s.description.empty()) << entry.path();
    }) << entry.path();
  }
  EXPECT_GE(files, 9u);
}

TEST(ShippedScenarios, Table1) {
  const Scenario a = load("table1/A.json"), b = load("table1/B.json"), c = load("table1/C.json"),
                 d = load("table1/D.json");
  for (const Scenario* s : {&a, &b, &c, &d}) {
    EXPECT_EQ(s->workload.model, "resnet50");
    EXPECT_EQ(s->workload.parameters, 25557032u);
    EXPECT_EQ(s->workload.target_batch, 32768u);
    EXPECT_EQ(s->averaging.rounds, 100u);
    ASSERT_TRUE(s->averaging.ps_peer.has_value());
    for (const auto& p : s->peers) {
      EXPECT_EQ(p.latency_s, 0.025) << s->name;  // one assumed latency for every Table 1 setup
      EXPECT_EQ(p.download_bps, p.upload_bps);   // symmetric
      EXPECT_EQ(p.reachability, Reachability::Public);
    }
  }
  ASSERT_EQ(a.peers.size(), 8u);
  for (const auto& p : a.peers) EXPECT_EQ(p.download_bps, 1e9);
  ASSERT_EQ(b.peers.size(), 16u);
  for (const auto& p : b.peers) EXPECT_EQ(p.download_bps, 0.2e9);
  ASSERT_EQ(c.peers.size(), 24u);
  EXPECT_EQ(count_group(c, "server-v100"), 8u);
  EXPECT_EQ(count_group(c, "workstation-1080ti"), 16u);
  ASSERT_EQ(d.peers.size(), 17u);
  const auto cpu = d.find_peer("cpu-server");
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(d.peers[*cpu].compute_sps, 0);
  EXPECT_EQ(d.peers[*cpu].download_bps, 2.5e9);
  EXPECT_EQ(d.averaging.ps_peer, cpu);
  EXPECT_EQ(count_group(d, "workstation-1080ti"), 16u);
}

TEST(ShippedScenarios, Albert) {
  const Scenario hb = load("albert/high-bandwidth.json"), het = load("albert/heterogeneous.json"),
                 lb = load("albert/heterogeneous-lb.json"), aux = load("albert/auxiliary.json"),
                 tv = load("albert/time-varying.json");
  for (const Scenario* s : {&hb, &het, &lb, &aux, &tv}) {
    EXPECT_EQ(s->workload.model, "albert-large");
    EXPECT_EQ(s->workload.target_batch, 4096u);
    EXPECT_EQ(s->workload.wire_precision, core::codec::Codec::Fp16);
  }
  ASSERT_EQ(hb.peers.size(), 16u);
  for (const auto& p : hb.peers) EXPECT_EQ(p.upload_bps, 25e9);

  for (const Scenario* s : {&het, &lb, &aux, &tv}) {
    EXPECT_EQ(count_group(*s, "t4-200mbps"), 4u);
    EXPECT_EQ(count_group(*s, "t4-100mbps"), 8u);
    EXPECT_EQ(count_group(*s, "t4-50mbps"), 4u);
  }
  EXPECT_EQ(het.averaging.strategy, core::averaging::Strategy::AllReduce);
  EXPECT_EQ(lb.averaging.strategy, core::averaging::Strategy::Planned);
  EXPECT_EQ(het.peers.size(), 16u);
  EXPECT_EQ(lb.peers.size(), 16u);

  EXPECT_EQ(aux.peers.size(), 20u);
  EXPECT_EQ(count_group(aux, "cpu-aux"), 4u);
  for (const auto& p : aux.peers)
    if (p.group == "cpu-aux") EXPECT_TRUE(p.compute_sps == 0 && p.upload_bps == 1e9);

  ASSERT_EQ(tv.peers.size(), 28u);
  EXPECT_EQ(count_group(tv, "t4-parttime"), 8u);
  constexpr double kHour = 3600;
  for (std::size_t i = 0; i < tv.peers.size(); ++i) {
    const bool part_time = tv.peers[i].group == "t4-parttime";
    EXPECT_EQ(tv.churn.mentions(tv.peers[i].name), part_time);
    EXPECT_TRUE(tv.peer_up(i, 1 * kHour));
    EXPECT_EQ(tv.peer_up(i, 9 * kHour), !part_time);  // 8 h on, 8 h off, all together
    EXPECT_TRUE(tv.peer_up(i, 17 * kHour));
    EXPECT_EQ(tv.peer_up(i, 159 * kHour), !part_time);
  }
}

// Hydra's distribution policy (docs/hydra.md §7): eight devices each, every one with its memory.
TEST(ShippedScenarios, PlacementCompositions) {
  for (const char* name : {"placement/gpu-mix.json", "placement/slow-uplinks.json", "placement/two-regions.json"}) {
    const Scenario s = load(name);
    ASSERT_EQ(s.peers.size(), 8u) << name;
    EXPECT_EQ(s.workload.target_batch, 1024u) << name;
    for (const auto& p : s.peers) {
      EXPECT_GT(p.compute_sps, 0) << name;
      ASSERT_TRUE(p.max_micro_batch.has_value()) << name << " " << p.name;
      EXPECT_GE(*p.max_micro_batch, 8u);
    }
  }
  const Scenario slow = load("placement/slow-uplinks.json");
  EXPECT_EQ(slow.peers[0].upload_bps, 10e6);
  EXPECT_EQ(slow.peers[0].download_bps, 100e6);
}

}  // namespace
}  // namespace swarmlab::scenarios
