// swarmlab placement end to end: the shipped compositions, a short policy training (the policy's
// learning is checked in tests/learn/torch/torch_placement_policy_test.cc).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "run_cli.h"

namespace swarmlab::cli {
namespace {

using testing::run_swarmlab;

bool built_with_libtorch() { return std::filesystem::exists(std::string(SWARMLAB_BINARY_DIR) + "/swarmlab-train"); }

TEST(PlacementCommand, SetsTheLearnedSizesBesideEveryBaselineAndWritesTheCurve) {
  const auto dir = std::filesystem::path(SWARMLAB_BINARY_DIR) / "placement_command_test";
  std::filesystem::remove_all(dir);
  const auto r = run_swarmlab("placement --updates 3 --samples 4 --json --out " + dir.string());
  if (!built_with_libtorch()) {
    EXPECT_EQ(r.exit_code, 2) << "without libtorch the command must say so";
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["compositions"].size(), 3u);
  for (const auto& c : j["compositions"]) {
    for (const char* k : {"equal", "proportional", "planner", "learned"}) {
      EXPECT_GT(c[k]["step_s"].get<double>(), 0) << c["name"] << " " << k;
      std::uint64_t total = 0;
      for (const auto& n : c[k]["sizes"]) total += n.get<std::uint64_t>();
      EXPECT_EQ(total, c["batch"].get<std::uint64_t>()) << c["name"] << " " << k;
    }
    EXPECT_EQ(c["devices"].size(), 8u);
  }
  // Three GPU generations on like links: shares in proportion to speed beat equal ones.
  const auto& mix = j["compositions"][0];
  ASSERT_EQ(mix["name"], "placement-gpu-mix");
  EXPECT_LT(mix["proportional"]["step_s"].get<double>(), 0.7 * mix["equal"]["step_s"].get<double>());

  std::ifstream csv(dir / "curve.csv");
  std::string line;
  int lines = 0;
  while (std::getline(csv, line)) ++lines;
  EXPECT_EQ(lines, 1 + 3 * 3);  // header, 3 updates x 3 compositions
  EXPECT_TRUE(std::filesystem::exists(dir / "placement.json"));
  EXPECT_GT(std::filesystem::file_size(dir / "curve.png"), 10000u);
}

TEST(PlacementCommand, RefusesCompositionsOfDifferentSizesNamingTheFile) {
  const auto dir = std::filesystem::path(SWARMLAB_BINARY_DIR) / "placement_command_bad";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string shipped = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/placement/";
  std::filesystem::copy_file(shipped + "gpu-mix.json", dir / "a.json");
  std::ofstream(dir / "b.json") << R"({"name": "small", "workload": {"model": "m", "parameters": 1000, "target_batch": 64},
    "peers": [{"name": "gpu", "count": 3, "compute_sps": 10, "bandwidth_bps": 1e8}]})";
  const auto r = run_swarmlab("placement --updates 1 --scenarios " + dir.string(), true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("b.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("expected 8 devices"), std::string::npos) << r.out;

  const auto empty = run_swarmlab("placement --scenarios " + (dir / "none").string(), true);
  EXPECT_EQ(empty.exit_code, 2) << empty.out;
}

}  // namespace
}  // namespace swarmlab::cli
