// Relays live (docs/trust.md §4): two client-mode peers, each behind its own real NAT (nftables
// masquerade in the emulated network, so neither can accept a connection), aggregate for each
// other through a public relay, and every averaged value is checked against the exact average.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "exec/launcher.h"
#include "exec/link_emulator.h"
#include "core/input_error.h"
#include "live_swarm.h"

namespace swarmlab::exec {
namespace {

// peers: 0 relay (public), 1 and 2 behind NAT; "ar" gives all three equal shares, so each NAT'd
// peer must receive the other's parts and return them its average: only the relay connects them.
std::string relayed_scenario(const std::string& nat_traversal) {
  return R"({
  "name": "live-relay", "seed": 5,
  "workload": {"model": "test", "parameters": 200000, "wire_precision": "fp32", "target_batch": 1024},
  "peers": [
    {"name": "relay", "compute_sps": 100, "bandwidth_bps": "100 Mb/s"},
    {"name": "home", "count": 2, "compute_sps": 100, "download_bps": "100 Mb/s", "upload_bps": "50 Mb/s",
     "reachability": "client", "nat": "symmetric"}
  ],
  "averaging": {"strategy": "ar", "rounds": 3, "part_bytes": 65536})" +
         nat_traversal + "\n}";
}

// Launches the scenario with every client-mode peer behind its own NAT router, and checks that
// every round completed with all `peers` and correct values.
LaunchResult launch_behind_nat(const std::string& scenario, const std::string& out, std::size_t peers) {
  LaunchOptions o = testing::test_launch(scenario, out);
  o.emulate_links = true;
  o.nat_clients = true;
  o.scale = 0.5;
  const LaunchResult r = launch(o);
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.rounds.size(), 3u);
  for (const auto& round : r.rounds) {
    EXPECT_EQ(round.participants, peers);
    EXPECT_EQ(round.reported, peers);
    EXPECT_TRUE(round.values_ok) << "round " << round.round << ": max error " << round.max_abs_error;
    EXPECT_EQ(round.min_fraction_averaged, 1.0);
    EXPECT_FALSE(round.dropped_any);
  }
  return r;
}

TEST(LiveRelay, TwoNatdPeersAverageThroughARelayWithValuesChecked) {
  if (const std::string why = LinkEmulator::nat_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  testing::TempDir dir;
  const std::string sc = dir.write("s.json", relayed_scenario(R"(,
  "nat_traversal": {"relays": ["relay"]})"));
  const LaunchResult r = launch_behind_nat(sc, dir.path + "/out", 3);
  EXPECT_EQ(r.peers_behind_nat, 2u);
  // The NAT'd peers' parts for each other went through the relay, which forwarded them.
  const auto relay = testing::exit_record(r.out_dir, 0), home0 = testing::exit_record(r.out_dir, 1), home1 = testing::exit_record(r.out_dir, 2);
  ASSERT_TRUE(relay.contains("relay")) << relay.dump();
  EXPECT_GT(relay["relay"]["forwarded"].get<std::uint64_t>(), 0u);
  EXPECT_GT(home0["relay"]["sent_relayed"].get<std::uint64_t>(), 0u);
  EXPECT_GT(home1["relay"]["received_relayed"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(home0["relay"]["refused"].get<std::uint64_t>(), 0u);
}

TEST(LiveRelay, PeersBehindConeNatsPunchThroughAndTheSymmetricOneIsRelayed) {
  if (const std::string why = LinkEmulator::nat_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  // Peers 1 and 2 behind cone NATs connect by a simultaneous open through their real routers;
  // peer 3, behind a symmetric NAT, reaches them through the relay. Every value checked.
  testing::TempDir dir;
  const std::string sc = dir.write("s.json", R"({
  "name": "live-punch", "seed": 5,
  "workload": {"model": "test", "parameters": 200000, "wire_precision": "fp32", "target_batch": 1024},
  "peers": [
    {"name": "relay", "compute_sps": 100, "bandwidth_bps": "100 Mb/s", "latency_ms": 5},
    {"name": "cone", "count": 2, "compute_sps": 100, "download_bps": "100 Mb/s", "upload_bps": "50 Mb/s",
     "latency_ms": 5, "reachability": "client", "nat": "cone"},
    {"name": "symmetric", "compute_sps": 100, "download_bps": "100 Mb/s", "upload_bps": "50 Mb/s",
     "latency_ms": 5, "reachability": "client", "nat": "symmetric"}
  ],
  "averaging": {"strategy": "ar", "rounds": 3, "part_bytes": 65536},
  "nat_traversal": {"relays": ["relay"], "hole_punching": true}
})");
  const LaunchResult r = launch_behind_nat(sc, dir.path + "/out", 4);
  EXPECT_EQ(r.peers_behind_nat, 3u);
  const auto cone0 = testing::exit_record(r.out_dir, 1), cone1 = testing::exit_record(r.out_dir, 2), sym = testing::exit_record(r.out_dir, 3);
  // The cone pair's connection was punched (each side counts it) ...
  EXPECT_EQ(cone0["punched_connections"].get<std::uint64_t>(), 1u) << cone0.dump();
  EXPECT_EQ(cone1["punched_connections"].get<std::uint64_t>(), 1u) << cone1.dump();
  // ... and the symmetric peer's pairs went through the relay.
  EXPECT_GT(sym["relay"]["sent_relayed"].get<std::uint64_t>(), 0u);
  EXPECT_GT(testing::exit_record(r.out_dir, 0)["relay"]["forwarded"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(sym["punched_connections"].get<std::uint64_t>(), 0u);
}

TEST(LiveRelay, HolePunchingWithoutEmulatedNatsIsRefusedWithTheFieldNamed) {
  testing::TempDir dir;
  const std::string sc = dir.write("s.json", relayed_scenario(R"(,
  "nat_traversal": {"relays": ["relay"], "hole_punching": true})"));
  LaunchOptions o = testing::test_launch(sc, dir.path + "/out");
  try {
    launch(o);
    ADD_FAILURE() << "launched";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nat_traversal.hole_punching"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace swarmlab::exec
