// `swarmlab sweep` end to end on small specs: the tidy table, identical for any --jobs; resuming
// (after a rerun, a damaged result, Ctrl-C, and SIGKILL of the sweep itself); failing runs
// recorded with their error; `compare` on the result.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>

#include "sweep_test_util.h"

namespace swarmlab::sweep {
namespace {

using ::testing::HasSubstr;
using namespace testing;

const std::string kSpecs = kSource + "/tests/sweep/specs/";

TEST(SweepCommand, TableIsTheSameForAnyJobsAndRerunsReuseResults) {
  const std::string a = fresh_dir("jobs1"), b = fresh_dir("jobs2");
  const auto r1 = swarmlab("sweep " + kSpecs + "small.json --out " + a + " --jobs 1 --no-wall-time --quiet");
  ASSERT_EQ(r1.exit_code, 0) << r1.out;
  EXPECT_THAT(r1.out, HasSubstr("16 runs, 16 with results (16 ok, 0 failed); 0 reused, 16 run now"));
  const auto r2 = swarmlab("sweep " + kSpecs + "small.json --out " + b + " --jobs 2 --no-wall-time --quiet");
  ASSERT_EQ(r2.exit_code, 0) << r2.out;
  const std::string table = read_text(a + "/results.csv");
  EXPECT_EQ(table, read_text(b + "/results.csv"));
  EXPECT_EQ(count_lines(table), 17u);
  EXPECT_THAT(table, HasSubstr("run,composition,seed,home,client_share,strategy,peers,client_peers,status,mean_round_s"));
  // Every run has its result file and its wall time.
  EXPECT_EQ(count_lines(read_text(a + "/runs_wall.csv")), 17u);
  EXPECT_TRUE(std::filesystem::exists(a + "/runs/000015.json"));

  // Rerun: everything reused; the default table appends wall_s (the only column that varies).
  const auto again = swarmlab("sweep " + kSpecs + "small.json --out " + a + " --quiet");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_THAT(again.out, HasSubstr("16 reused, 0 run now"));
  const std::string with_wall = read_text(a + "/results.csv");
  EXPECT_THAT(with_wall.substr(0, with_wall.find('\n')), ::testing::EndsWith(",error,wall_s"));
  EXPECT_EQ(without_last_column(with_wall), table);

  // A damaged result file is run again, and only that one.
  { std::ofstream(a + "/runs/000003.json", std::ios::trunc) << "{\"run\": 3, \"trunc"; }
  const auto repaired = swarmlab("sweep " + kSpecs + "small.json --out " + a + " --no-wall-time --quiet");
  ASSERT_EQ(repaired.exit_code, 0) << repaired.out;
  EXPECT_THAT(repaired.out, HasSubstr("15 reused, 1 run now"));
  EXPECT_EQ(read_text(a + "/results.csv"), table);
}

TEST(SweepCommand, FailingRunsAreRecordedAndTheSweepGoesOn) {
  const std::string out = fresh_dir("failing");
  const auto r = swarmlab("sweep " + kSpecs + "failing.json --out " + out + " --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("2 runs, 2 with results (1 ok, 1 failed)"));
  const std::string table = read_text(out + "/results.csv");
  EXPECT_THAT(table, HasSubstr(",error,"));
  EXPECT_THAT(table, HasSubstr("expected at least one peer with reachability \"\"public\"\""));
  EXPECT_THAT(table, HasSubstr("\n1,1,1,2,1,14,12,ok,"));
  // Failed runs stay failed on a rerun, and run again only when asked.
  EXPECT_THAT(swarmlab("sweep " + kSpecs + "failing.json --out " + out + " --quiet").out, HasSubstr("2 reused, 0 run now"));
  EXPECT_THAT(swarmlab("sweep " + kSpecs + "failing.json --out " + out + " --quiet --retry-failed").out,
              HasSubstr("1 reused, 1 run now"));
}

// Starts a sweep in the background and sends `signal` to it once two results are stored.
Command interrupted_sweep(const std::string& out, int signal) {
  return shell("(" + kSwarmlab + " sweep " + kSpecs + "resume.json --out " + out +
               " --jobs 1 --no-wall-time --quiet & pid=$!; "
               "while kill -0 $pid 2>/dev/null && [ $(ls " + out + "/runs 2>/dev/null | grep -c 'json$') -lt 2 ]; "
               "do sleep 0.01; done; kill -" + std::to_string(signal) + " $pid; wait $pid; echo exit=$?)");
}

TEST(SweepCommand, ResumesAfterCtrlCAndAfterSigkill) {
  const std::string clean = fresh_dir("resume_clean");
  ASSERT_EQ(swarmlab("sweep " + kSpecs + "resume.json --out " + clean + " --jobs 2 --no-wall-time --quiet").exit_code, 0);
  const std::string table = read_text(clean + "/results.csv");
  ASSERT_EQ(count_lines(table), 17u);

  for (const int signal : {SIGINT, SIGKILL}) {
    SCOPED_TRACE(signal);
    const std::string out = fresh_dir("resume_" + std::to_string(signal));
    const auto stopped = interrupted_sweep(out, signal);
    if (signal == SIGINT) {
      EXPECT_THAT(stopped.out, HasSubstr("interrupted: "));
      EXPECT_THAT(stopped.out, HasSubstr("exit=130"));
    } else {
      EXPECT_THAT(stopped.out, HasSubstr("exit=137"));
    }
    std::size_t kept = 0;
    for (const auto& e : std::filesystem::directory_iterator(out + "/runs")) {
      const std::string name = e.path().filename().string();
      kept += name.size() > 5 && name.substr(name.size() - 5) == ".json";
      // Ctrl-C lets the writer finish; SIGKILL can land between a temporary file's write and its
      // rename, and the resume below must clear what it left.
      if (signal == SIGINT) EXPECT_EQ(name.find(".tmp."), std::string::npos) << "a half-written file was left: " << name;
    }
    EXPECT_GT(kept, 0u);
    EXPECT_LT(kept, 16u);
    const auto resumed = swarmlab("sweep " + kSpecs + "resume.json --out " + out + " --jobs 2 --no-wall-time --quiet");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
    EXPECT_THAT(resumed.out, HasSubstr(std::to_string(kept) + " reused, " + std::to_string(16 - kept) + " run now"));
    EXPECT_EQ(read_text(out + "/results.csv"), table);
    for (const auto& e : std::filesystem::directory_iterator(out + "/runs"))
      EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos)
          << "the resume left a half-written file: " << e.path().filename().string();
  }
}

TEST(SweepCommand, CompareWithinASweepAndAcrossTwo) {
  const std::string a = fresh_dir("compare_a");
  ASSERT_EQ(swarmlab("sweep " + kSpecs + "small.json --out " + a + " --quiet").exit_code, 0);
  const auto c = swarmlab("compare " + a + " --no-report");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  // The planner's rounds are shorter than all-reduce's in every composition of this sweep.
  EXPECT_THAT(c.out, HasSubstr("compare mean_round_s (lower is better): strategy=ours against strategy=ar, 4 compositions"));
  EXPECT_THAT(c.out, HasSubstr("helps in 100.0% of compositions"));
  EXPECT_THAT(c.out, HasSubstr("worst case "));
  const std::string csv = read_text(a + "/compare/compare.csv");
  EXPECT_THAT(csv, HasSubstr("home,client_share,pairs,baseline_mean,candidate_mean,change,ci_low,ci_high,helps,significant"));
  EXPECT_EQ(count_lines(csv), 5u);
  EXPECT_EQ(swarmlab("compare " + a + " --axis nonsense --no-report").exit_code, 2);
  EXPECT_EQ(swarmlab("compare " + a + "/no-such-sweep --no-report").exit_code, 2);
  // Two sweeps: the same sweep against itself changes nothing anywhere.
  const auto same = swarmlab("compare " + a + " " + a + " --out " + a + "/self --no-report");
  ASSERT_EQ(same.exit_code, 0) << same.out;
  EXPECT_THAT(same.out, HasSubstr("median change +0.0%"));
}

TEST(SweepCommand, TrainingSweepRunsThroughRunTrainingAndComparesStepsPerHour) {
  const std::string out = fresh_dir("training");
  const auto r = swarmlab("sweep " + kSpecs + "training.json --out " + out + " --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string table = read_text(out + "/results.csv");
  EXPECT_THAT(table, HasSubstr("run,composition,seed,home,dpu,peers,client_peers,status,steps_per_hour,steps,"));
  EXPECT_EQ(count_lines(table), 5u);
  const auto c = swarmlab("compare " + out + " --axis dpu --no-report");
  ASSERT_EQ(c.exit_code, 0) << c.out;
  // Delayed parameter updates overlap compute with averaging: more steps per hour.
  EXPECT_THAT(c.out, HasSubstr("compare steps_per_hour (higher is better): dpu=true against dpu=false, 2 compositions"));
  EXPECT_THAT(c.out, HasSubstr("helps in 100.0% of compositions"));
}

}  // namespace
}  // namespace swarmlab::sweep
