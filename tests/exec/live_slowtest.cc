// Long live runs (label slow): the 100 MB loopback average and simulated-versus-measured time.
#include <iostream>

#include <gtest/gtest.h>

#include "exec/launcher.h"
#include "exec/link_emulator.h"
#include "exec/validate.h"
#include "live_swarm.h"

namespace swarmlab::exec {
namespace {

// 8 processes average a 100 MiB fp32 vector with Ours over unshaped loopback; every value is
// checked against the exact average, and the throughput is compared with one bulk TCP stream.
TEST(LiveSwarmSlow, HundredMegabyteAverageOverLoopback) {
  testing::TempDir dir;
  LaunchOptions o = testing::test_launch(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/A.json", dir.path + "/out");
  o.strategy = core::averaging::Strategy::Planned;
  o.parameters = 26'214'400;  // 100 MiB of fp32
  o.precision = core::codec::Codec::Fp32;
  o.rounds = 3;
  o.deadline_s = 600;
  o.measure_loopback = true;
  const LaunchResult r = launch(o);
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.rounds.size(), 3u);
  for (const auto& round : r.rounds) {
    EXPECT_EQ(round.reported, 8u);
    EXPECT_LE(round.max_abs_error, 1e-5);
  }
  double bytes = 0;
  for (std::size_t i = 1; i < r.rounds.size(); ++i) bytes += static_cast<double>(r.rounds[i].bytes_sent);
  const double throughput = bytes / 2 / r.mean_round_s();
  std::cout << "mean round " << r.mean_round_s() << " s, swarm throughput " << throughput / 1e6
            << " MB/s, loopback limit " << r.loopback_limit_Bps / 1e6 << " MB/s, ratio "
            << throughput / r.loopback_limit_Bps << "\n";
  EXPECT_GT(r.loopback_limit_Bps, 0);
}

// Table 1 A at a tenth of its rates behind emulated links: the simulator predicts the live
// averaging time within 15% for AR and Ours.
TEST(LiveSwarmSlow, ValidateTable1AAtATenth) {
  if (const std::string why = LinkEmulator::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  testing::TempDir dir;
  ValidateOptions o;
  o.scenario_path = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/A.json";
  o.strategies = {core::averaging::Strategy::AllReduce, core::averaging::Strategy::Planned};
  o.emulate_links = true;
  o.scale = 0.1;
  o.rounds = 3;
  o.out_dir = dir.path;
  o.executable = std::string(SWARMLAB_BINARY_DIR) + "/swarmlab";
  const ValidateResult r = validate(o);
  std::cout << validate_json(r) << "\n";
  ASSERT_EQ(r.rows.size(), 2u);
  for (const auto& row : r.rows) {
    EXPECT_TRUE(row.live_ok) << row.strategy;
    EXPECT_NEAR(row.ratio(), 1.0, 0.15) << row.strategy;
  }
}

}  // namespace
}  // namespace swarmlab::exec
