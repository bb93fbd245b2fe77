// Slow sweep checks (label "slow"): the shipped example sweep end to end (killed and resumed,
// then again under mpirun -np 3 with the same table), and reports in headless chromium.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "sweep_test_util.h"

namespace swarmlab::sweep {
namespace {

using ::testing::HasSubstr;
using namespace testing;

// mpirun refuses to start as root unless told it may (Open MPI's documented variables).
const std::string kMpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 3 ";

// Loads report.html in headless chromium: every plot must decode and display (the page's script
// records "shown/total" on <body>), and the page must log nothing to the console.
void expect_report_shows_plots(const std::string& html) {
  ASSERT_TRUE(std::filesystem::exists(html)) << html;
  const std::string dom = html + ".dom", log = html + ".chromium.log";
  const auto r = shell("timeout 120 chromium --headless --no-sandbox --disable-gpu --enable-logging=stderr --v=0 "
                       "--virtual-time-budget=5000 --dump-dom file://" + html + " > " + dom + " 2> " + log);
  ASSERT_EQ(r.exit_code, 0) << read_text(log);
  const std::string page = read_text(dom), console = read_text(log);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(page, m, std::regex("data-plots-displayed=\"(\\d+)/(\\d+)\""))) << page.substr(0, 2000);
  EXPECT_GT(std::stoi(m[2]), 0);
  EXPECT_EQ(m[1], m[2]) << "plots displayed / plots";
  EXPECT_EQ(console.find(":CONSOLE"), std::string::npos) << console;
}

TEST(SweepSlow, ReportLoadsInChromiumWithEveryPlotShown) {
  const std::string out = fresh_dir("report");
  ASSERT_EQ(swarmlab("sweep " + kSource + "/tests/sweep/specs/small.json --out " + out + " --quiet").exit_code, 0);
  const auto c = swarmlab("compare " + out);
  ASSERT_EQ(c.exit_code, 0) << c.out;
  ASSERT_THAT(c.out, HasSubstr("report.html and its PNG plots"));
  expect_report_shows_plots(out + "/compare/report.html");
  const auto r = swarmlab("report " + out);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  expect_report_shows_plots(out + "/report/report.html");
}

TEST(SweepSlow, MpirunWithThreeRanksWritesTheLocalTable) {
  const std::string local = fresh_dir("mpi_local"), mpi = fresh_dir("mpi");
  const std::string spec = kSource + "/tests/sweep/specs/small.json";
  ASSERT_EQ(swarmlab("sweep " + spec + " --out " + local + " --jobs 1 --no-wall-time --quiet").exit_code, 0);
  const auto r = shell(kMpirun + kSwarmlab + " sweep " + spec + " --out " + mpi + " --no-wall-time --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("on MPI, 3 ranks (2 running)"));
  EXPECT_EQ(read_text(mpi + "/results.csv"), read_text(local + "/results.csv"));
  EXPECT_THAT(read_text(mpi + "/runs_wall.csv"), HasSubstr(",rank 1 on "));
  EXPECT_THAT(read_text(mpi + "/runs_wall.csv"), HasSubstr(",rank 2 on "));
}

// The shipped example: 200 compositions x 2 strategies x 3 seeds = 1200 averaging runs.
TEST(SweepSlow, ExampleSweepResumesAfterKillMatchesMpirunAndCompares) {
  const std::string spec = kSource + "/scenarios/sweeps/ar-vs-planner.json";
  const std::string out = fresh_dir("example"), mpi = fresh_dir("example_mpi");
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  // Killed (SIGKILL, no chance to clean up) 20 s in, then resumed: since map keys are compared with
  // memcmp and wire fields appended without vector::insert, the whole sweep can end within a minute.
  const auto killed = shell("(" + kSwarmlab + " sweep " + spec + " --out " + out +
                            " --jobs 2 --quiet & pid=$!; sleep 20; kill -9 $pid; wait $pid; echo exit=$?)");
  EXPECT_THAT(killed.out, HasSubstr("exit=137"));
  const auto resumed = swarmlab("sweep " + spec + " --out " + out + " --jobs 2 --quiet");
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_THAT(resumed.out, HasSubstr("1200 runs, 1200 with results (1200 ok, 0 failed)"));
  std::printf("example sweep with --jobs 2, killed after 60 s and resumed: %.0f s in all\n%s", wall, resumed.out.c_str());
  const std::string table = read_text(out + "/results.csv");
  EXPECT_EQ(count_lines(table), 1201u);

  const auto m = shell(kMpirun + kSwarmlab + " sweep " + spec + " --out " + mpi + " --no-wall-time --quiet");
  ASSERT_EQ(m.exit_code, 0) << m.out;
  std::printf("%s", m.out.c_str());
  EXPECT_EQ(read_text(mpi + "/results.csv"), without_last_column(table));

  const auto c = swarmlab("compare " + out);
  ASSERT_EQ(c.exit_code, 0) << c.out;
  std::printf("%s", c.out.c_str());
  EXPECT_THAT(c.out, HasSubstr("strategy=ours against strategy=ar, 200 compositions"));
  expect_report_shows_plots(out + "/compare/report.html");
}

}  // namespace
}  // namespace swarmlab::sweep
