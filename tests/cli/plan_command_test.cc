// End to end: `swarmlab plan` with a budget on the roles search reports the gap it proved.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "run_cli.h"
#include "../core/planner/random_compositions.h"

namespace swarmlab::cli::testing {
namespace {

std::string peer_name(int i) {
  std::string name = "p";
  name += std::to_string(i);
  return name;
}

// A planner test composition written as a scenario: one peer entry each, its links divided by the
// transport's goodput (0.735) so that the planner sees the composition's own capacities.
std::string composition_scenario(int n, std::uint64_t seed) {
  const core::planner::PlannerInput in = core::planner::testing::random_composition(n, seed);
  const double goodput = 0.735;
  nlohmann::ordered_json j;
  j["name"] = "planner-composition-" + std::to_string(seed);
  j["description"] = "the planner benchmark's random composition " + std::to_string(seed);
  j["workload"] = {{"model", "custom"},
                   {"parameters", std::llround(in.gradient_bits / 16)},
                   {"wire_precision", "fp16"},
                   {"target_batch", std::llround(in.target_batch)}};
  j["peers"] = nlohmann::ordered_json::array();
  for (int i = 0; i < n; ++i) {
    const auto& p = in.peers[i];
    nlohmann::ordered_json peer = {{"name", peer_name(i)},
                                   {"compute_sps", p.compute_sps},
                                   {"download_bps", p.download_bps / goodput},
                                   {"upload_bps", p.upload_bps / goodput}};
    if (p.client_mode) peer["reachability"] = "client";
    j["peers"].push_back(peer);
  }
  j["pair_caps"] = nlohmann::ordered_json::array();
  for (int a = 0; a < n && !in.pair_caps.empty(); ++a)
    for (int b = 0; b < n; ++b)
      if (a != b && std::isfinite(in.pair_caps[a][b]))
        j["pair_caps"].push_back(
            {{"from", peer_name(a)}, {"to", peer_name(b)}, {"bps", in.pair_caps[a][b] / goodput}});
  return j.dump();
}

TEST(PlanCommand, ABudgetOfMipsEndsTheRolesSearchWithItsProvenGap) {
  // 24352: two capped regions, whose roles search takes five MIPs to prove its optimum.
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("swarmlab-plan-" + std::to_string(getpid()) + ".json");
  std::ofstream(file) << composition_scenario(24, 24352);
  const auto plan = [&](const std::string& flags) {
    const CliResult r = run_swarmlab("plan --json " + file.string() + " " + flags);
    EXPECT_EQ(r.exit_code, 0) << flags;
    return nlohmann::json::parse(r.out);
  };
  const auto exact = plan("");
  const auto one = plan("--max-mips 1");
  const auto shallow = plan("--max-mip-nodes 1");
  std::filesystem::remove(file);

  ASSERT_TRUE(exact["roles_exact"].get<bool>());
  const double optimum = exact["steps_per_s"];
  for (const auto* bounded : {&one, &shallow}) {
    const auto& b = *bounded;
    EXPECT_FALSE(b["roles_exact"].get<bool>());
    const double found = b["steps_per_s"], bound = b["steps_per_s_bound"], gap = b["roles_gap"];
    // The bound is proven: the optimum lies between what was found and it.
    EXPECT_LE(found, optimum * (1 + 1e-9));
    EXPECT_GE(bound, optimum * (1 - 1e-9));
    EXPECT_NEAR(gap, bound / found - 1, 1e-9);
    EXPECT_NE(b["solver"].get<std::string>().find("budget spent"), std::string::npos) << b["solver"];
  }
  // One MIP is not enough to find the optimum here.
  EXPECT_LT(one["steps_per_s"].get<double>(), optimum * (1 - 1e-3));
}

}  // namespace
}  // namespace swarmlab::cli::testing
