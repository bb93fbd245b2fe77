// Plans: grids, random samples and Latin hypercubes over a base scenario; materialised runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "sweep/materialize.h"
#include "sweep/plan.h"
#include "sweep/spec_loader.h"
#include "sweep_test_util.h"

namespace swarmlab::sweep {
namespace {

using testing::kSource;

// A spec whose base path resolves from tests/sweep/specs/.
SweepSpec spec_of(const std::string& sampling, const std::string& axes, const std::string& seeds = "[1]") {
  const std::string text = R"({"name": "t", "base": "../../../scenarios/sweeps/volunteers.json",
    "experiment": {"run": "averaging", "rounds": 1}, "sampling": )" + sampling + R"(, "seeds": )" + seeds +
                           R"(, "axes": )" + axes + "}";
  return parse_sweep_spec(text, kSource + "/tests/sweep/specs/inline.json");
}

TEST(Plan, GridIsTheProductWithCrossedAxesAndSeedsInside) {
  const SweepSpec s = load_sweep_spec(kSource + "/tests/sweep/specs/small.json");
  const SweepPlan p = make_plan(s);
  ASSERT_EQ(p.runs.size(), 16u);
  EXPECT_EQ(p.compositions, 8u);
  // Seeds vary fastest, then the crossed strategy, then the grid points.
  EXPECT_EQ(p.runs[0].seed, 1u);
  EXPECT_EQ(p.runs[1].seed, 2u);
  EXPECT_EQ(p.runs[0].values[2], "ar");
  EXPECT_EQ(p.runs[2].values[2], "ours");
  EXPECT_EQ(p.runs[2].values[0], p.runs[0].values[0]);
  std::set<std::string> points;
  for (const auto& r : p.runs) {
    EXPECT_EQ(r.index, &r - p.runs.data());
    EXPECT_EQ(r.composition, r.index / 2);
    points.insert(json(r.values).dump());
  }
  EXPECT_EQ(points.size(), 8u);
}

TEST(Plan, GridRangesTakeStepsLevels) {
  const SweepSpec s = spec_of(R"({"method": "grid"})",
                              R"([{"set": "upload_bps", "group": "home", "range": ["10 Mb/s", "40 Mb/s"], "scale": "log", "steps": 3}])");
  const SweepPlan p = make_plan(s);
  ASSERT_EQ(p.runs.size(), 3u);
  EXPECT_DOUBLE_EQ(p.runs[0].values[0].get<double>(), 1e7);
  EXPECT_DOUBLE_EQ(p.runs[1].values[0].get<double>(), 2e7);
  EXPECT_DOUBLE_EQ(p.runs[2].values[0].get<double>(), 4e7);
}

TEST(Plan, LatinHypercubePutsOnePointInEveryStratumOfEveryAxis) {
  const std::size_t n = 20;
  const SweepSpec s = spec_of(R"({"method": "latin_hypercube", "count": 20, "seed": 7})",
                              R"([{"set": "client_share", "group": "home", "range": [0, 1]},
                                  {"set": "count", "group": "home", "range": [1, 20]},
                                  {"set": "strategy", "values": ["ar", "ours"], "crossed": true}])");
  const SweepPlan p = make_plan(s);
  ASSERT_EQ(p.runs.size(), 2 * n);
  EXPECT_EQ(p.compositions, 2 * n);
  std::vector<double> shares;
  std::set<std::uint64_t> counts;
  for (std::size_t i = 0; i < p.runs.size(); i += 2) {
    EXPECT_EQ(p.runs[i].values[0], p.runs[i + 1].values[0]);  // crossed: same point at both strategies
    shares.push_back(p.runs[i].values[0].get<double>());
    counts.insert(p.runs[i].values[1].get<std::uint64_t>());
  }
  std::sort(shares.begin(), shares.end());
  for (std::size_t i = 0; i < n; ++i) {  // 4 significant digits may move a value onto a boundary
    EXPECT_GE(shares[i], static_cast<double>(i) / n - 1e-4) << i;
    EXPECT_LE(shares[i], static_cast<double>(i + 1) / n + 1e-4) << i;
  }
  EXPECT_EQ(counts.size(), n);  // 20 integers in 20 strata: each exactly once
  EXPECT_EQ(*counts.begin(), 1u);
  EXPECT_EQ(*counts.rbegin(), 20u);
}

TEST(Plan, RandomSamplesStayInRangeAndFollowTheSamplingSeed) {
  const std::string axes = R"([{"set": "compute_sps", "group": "home", "range": [50, 100]}])";
  const SweepPlan a = make_plan(spec_of(R"({"method": "random", "count": 30, "seed": 1})", axes));
  const SweepPlan b = make_plan(spec_of(R"({"method": "random", "count": 30, "seed": 1})", axes));
  const SweepPlan c = make_plan(spec_of(R"({"method": "random", "count": 30, "seed": 2})", axes));
  ASSERT_EQ(a.runs.size(), 30u);
  bool differs = false;
  for (std::size_t i = 0; i < 30; ++i) {
    const double v = a.runs[i].values[0].get<double>();
    EXPECT_GE(v, 50);
    EXPECT_LE(v, 100);
    EXPECT_EQ(a.runs[i].values, b.runs[i].values);
    differs = differs || a.runs[i].values != c.runs[i].values;
  }
  EXPECT_TRUE(differs);
}

TEST(Materialize, ClientShareAndPerPeerDrawsArePairedAcrossCrossedAxes) {
  const SweepSpec s = spec_of(R"({"method": "grid"})",
                              R"([{"set": "client_share", "group": "home", "values": [0.5]},
                                  {"set": "upload_bps", "group": "home", "values": ["20 Mb/s"],
                                   "per_peer": {"distribution": "lognormal", "sigma": 0.4}},
                                  {"set": "strategy", "values": ["ar", "ours"], "crossed": true}])",
                              "[1, 2]");
  const SweepPlan p = make_plan(s);
  ASSERT_EQ(p.runs.size(), 4u);  // (ar, ours) x seeds (1, 2)
  const auto homes = [&](const RunDesc& r) {
    const Materialized m = materialize(s, r);
    std::vector<std::pair<double, bool>> out;
    for (const auto& peer : m.scenario.peers)
      if (peer.name.rfind("home", 0) == 0)
        out.emplace_back(peer.upload_bps, peer.reachability == scenarios::Reachability::Client);
    return out;
  };
  const auto ar1 = homes(p.runs[0]), ar2 = homes(p.runs[1]), ours1 = homes(p.runs[2]);
  ASSERT_EQ(ar1.size(), 12u);
  EXPECT_EQ(std::count_if(ar1.begin(), ar1.end(), [](const auto& x) { return x.second; }), 6);
  EXPECT_EQ(ar1, ours1);  // same seed: the same peers under either strategy
  EXPECT_NE(ar1, ar2);    // another seed: other draws
  std::set<double> uploads;
  for (const auto& [up, client] : ar1) uploads.insert(up);
  EXPECT_GT(uploads.size(), 6u);
  EXPECT_EQ(materialize(s, p.runs[2]).scenario.averaging.strategy, core::averaging::Strategy::Planned);
}

TEST(Materialize, CountZeroRemovesAnEntryAndKeysDependOnEverything) {
  const SweepSpec s = spec_of(R"({"method": "grid"})", R"([{"set": "count", "group": "datacenter", "values": [0, 3]}])");
  const SweepPlan p = make_plan(s);
  const Materialized none = materialize(s, p.runs[0]);
  EXPECT_EQ(none.scenario.peers.size(), 12u);
  EXPECT_EQ(materialize(s, p.runs[1]).scenario.peers.size(), 15u);
  EXPECT_NE(run_key(s, p.runs[0]), run_key(s, p.runs[1]));
  EXPECT_EQ(run_key(s, p.runs[0]), run_key(load_sweep_spec(kSource + "/tests/sweep/specs/inline-equal.json"), p.runs[0]));
}

TEST(ShippedSweeps, EverySpecLoadsAndTheExampleHasItsShape) {
  std::size_t specs = 0;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/scenarios/sweeps")) {
    std::ifstream in(e.path());
    const json j = json::parse(in);
    if (!j.contains("axes")) continue;
    ++specs;
    EXPECT_NO_THROW(load_sweep_spec(e.path().string())) << e.path();
  }
  EXPECT_GE(specs, 1u);
  // 200 compositions x {AR, planner} x 3 seeds, 8 to 64 peers, up to half the home peers clients.
  const SweepSpec s = load_sweep_spec(kSource + "/scenarios/sweeps/ar-vs-planner.json");
  const SweepPlan p = make_plan(s);
  EXPECT_EQ(p.runs.size(), 1200u);
  EXPECT_EQ(p.compositions, 400u);
  std::size_t min_peers = 1000, max_peers = 0;
  for (const auto& r : p.runs) {
    const std::size_t peers = r.values[0].get<std::size_t>() + r.values[1].get<std::size_t>();
    min_peers = std::min(min_peers, peers);
    max_peers = std::max(max_peers, peers);
    EXPECT_LE(r.values[3].get<double>(), 0.5);
  }
  EXPECT_GE(min_peers, 8u);
  EXPECT_LE(max_peers, 64u);
}

}  // namespace
}  // namespace swarmlab::sweep
