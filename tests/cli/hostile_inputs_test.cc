// The hostile-input corpus (tests/cli/hostile/, issue 18): every input a careless user or script
// sent the CLI and that crashed it, hung it, blew up its memory, gave a silent wrong result, wrote
// outside --out or failed without saying where. Each must now exit with code 2 and one message
// naming the file, the place and what was expected, within a few seconds and 1 GiB of address
// space (setrlimit in the child, so a regression fails here instead of taking the machine down).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>
#include <vector>

namespace swarmlab::cli::testing {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxWallS = 5;
constexpr rlim_t kMaxAddressSpace = rlim_t{1} << 30;

struct LimitedRun {
  int exit_code = -1;   // -1: killed by a signal (or by the wall limit)
  int signal = 0;
  double wall_s = 0;
  std::string out;      // stdout and stderr together
};

// Runs `swarmlab ARGS` through /bin/sh in `cwd` with the address-space limit, killing it after
// 3 × kMaxWallS (so a hang fails the test rather than the suite).
LimitedRun run_limited(const std::string& args, const fs::path& cwd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {};  // CLOEXEC: runs in parallel must not hold each other's pipes
  // Everything the child needs is made before fork: other threads may hold the allocator's lock.
  const std::string cmd = "exec " + std::string(SWARMLAB_BINARY_DIR) + "/swarmlab " + args;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const rlimit as{kMaxAddressSpace, kMaxAddressSpace};
    setrlimit(RLIMIT_AS, &as);
    const rlimit cpu{30, 30};
    setrlimit(RLIMIT_CPU, &cpu);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close(fds[0]);
    close(fds[1]);
    if (chdir(cwd.c_str()) != 0) _exit(126);
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  LimitedRun r;
  char buf[4096];
  bool killed = false;
  while (true) {
    const double left = 3 * kMaxWallS - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (left <= 0 && !killed) {
      kill(pid, SIGKILL);
      killed = true;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, killed ? 1000 : static_cast<int>(left * 1000) + 1) <= 0) {
      if (killed) break;
      continue;
    }
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    if (r.out.size() < (1u << 20)) r.out.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// @H@: the corpus folder; @S@: the shipped scenarios; @T@: this test's scratch folder.
std::string expand(std::string s, const fs::path& scratch) {
  const std::pair<std::string, std::string> subs[] = {
      {"@H@", std::string(SWARMLAB_SOURCE_DIR) + "/tests/cli/hostile"},
      {"@S@", std::string(SWARMLAB_SOURCE_DIR) + "/scenarios"},
      {"@T@", scratch.string()}};
  for (const auto& [from, to] : subs)
    for (std::size_t at; (at = s.find(from)) != std::string::npos;) s.replace(at, from.size(), to);
  return s;
}

// A swarm of n peers that all differ (compute, upload, download), strategy "ours": past the
// planner's size from 129 peers (made here rather than checked in: 4000 peers are 400 KB).
void write_heterogeneous(const fs::path& path, int n) {
  std::ofstream f(path);
  f << "{\"name\": \"plan-" << n << "\", \"seed\": 1, \"workload\": {\"model\": \"resnet50\", \"parameters\": "
       "25557032, \"wire_precision\": \"fp16\", \"target_batch\": 32768}, \"averaging\": {\"strategy\": \"ours\"}, "
       "\"peers\": [";
  for (int i = 0; i < n; ++i)
    f << (i ? ", " : "") << "{\"name\": \"p" << i << "\", \"compute_sps\": " << 10 + (i * 37) % 300
      << ", \"upload_bps\": " << 10000000LL * (1 + (i * 53) % 97) << ", \"download_bps\": " << 20000000LL * (1 + (i * 29) % 89)
      << ", \"latency_ms\": 20}";
  f << "]}\n";
}

struct Hostile {
  const char* name;
  const char* args;
  // Substrings the message must hold: the file (or "command line"), the location, the expectation.
  std::vector<const char*> expect;
};

std::ostream& operator<<(std::ostream& o, const Hostile& h) { return o << h.name; }

class HostileInput : public ::testing::TestWithParam<Hostile> {
 protected:
  static void SetUpTestSuite() {
    scratch_ = fs::temp_directory_path() / ("swarmlab-hostile-" + std::to_string(getpid()));
    fs::create_directories(scratch_);
    mkfifo((scratch_ / "fifo.json").c_str(), 0600);
    for (int n : {200, 1000, 4000}) write_heterogeneous(scratch_ / ("plan_" + std::to_string(n) + ".json"), n);
    std::ofstream big(scratch_ / "big.json", std::ios::binary);
    big << "{\"name\": \"";
    big << std::string((16u << 20) + 16, 'a');
    big << "\"}";
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(scratch_, ec);
  }
  static fs::path scratch_;
};
fs::path HostileInput::scratch_;

TEST_P(HostileInput, ExitsTwoWithALocatedMessageQuicklyAndInBoundedMemory) {
  const Hostile& h = GetParam();
  const fs::path cwd = scratch_ / h.name;
  fs::create_directories(cwd);
  const LimitedRun r = run_limited(expand(h.args, scratch_), cwd);
  EXPECT_EQ(r.signal, 0) << "killed by signal " << r.signal << " (crash, memory limit or hang)\n" << r.out;
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_LT(r.wall_s, kMaxWallS) << r.out;
  for (const char* e : h.expect) EXPECT_NE(r.out.find(expand(e, scratch_)), std::string::npos) << "missing \"" << e << "\" in:\n" << r.out;
  // One message: no stack of errors, no progress bar, no terminal escapes.
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  // Nothing escaped the working folder.
  EXPECT_FALSE(fs::exists(scratch_.parent_path() / "escaped"));
  EXPECT_FALSE(fs::exists("/tmp/escaped"));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Corpus, HostileInput, ::testing::Values(
    // Crashes.
    Hostile{"table1_dht_only", "table1 --quiet --scenarios @H@/table1_dht",
            {"table1_dht/A.json", "top level", "swarmlab table1 needs a collaboration scenario"}},
    Hostile{"plan_4000", "plan @T@/plan_4000.json", {"plan_4000.json", ": peers:", "expected at most 128 peers"}},
    Hostile{"albert_10M_pair_caps", "albert --quiet --scenarios @H@/albert_paircaps",
            {"high-bandwidth.json", "pair_caps[0]", "expected at most 1000000 capped ordered pairs"}},
    // Hangs and memory blow-ups.
    Hostile{"sim_join_1e308", "sim --quiet @H@/join_1e308.json", {"join_1e308.json", "peers[0].join_s", "expected at most 100000000 s"}},
    Hostile{"sim_join_1e12", "sim --quiet @H@/join_1e12.json", {"join_1e12.json", "peers[0].join_s", "expected at most 100000000 s"}},
    Hostile{"sim_params_2_64_minus_1", "sim --quiet @H@/params_2_64_minus_1.json",
            {"params_2_64_minus_1.json", "workload.parameters", "1000000000000"}},
    Hostile{"sim_ps_params_2_64_minus_1", "sim --quiet --strategy ps @H@/params_2_64_minus_1.json",
            {"params_2_64_minus_1.json", "workload.parameters"}},
    Hostile{"table1_params_2_64_minus_1", "table1 --quiet --scenarios @H@/table1_params",
            {"table1_params/A.json", "workload.parameters", "an integer from 1 to 1000000000000"}},
    Hostile{"sim_params_1e12", "sim --quiet --strategy ar @H@/params_1e12.json",
            {"params_1e12.json", "workload.parameters", "estimated at", "--max-events"}},
    Hostile{"plan_1000", "plan @T@/plan_1000.json", {"plan_1000.json", ": peers:", "expected at most 128 peers"}},
    Hostile{"plan_200", "plan --json @T@/plan_200.json", {"plan_200.json", ": peers:", "expected at most 128 peers"}},
    Hostile{"albert_hours_nan", "albert --quiet --hours nan", {"--hours", "expected a number of hours", "\"nan\""}},
    Hostile{"dht_gets_1e12", "dht --gets-per-peer-hour 1e12", {"--gets-per-peer-hour", "expected a number of lookups"}},
    Hostile{"dht_puts_1e9", "dht --puts-per-peer-hour 1e9", {"--puts-per-peer-hour", "expected a number of keys"}},
    Hostile{"dht_costly", "dht --peers 100000 --hours 1000 --gets-per-peer-hour 1000",
            {"command line", "--peers, --hours", "estimated at", "--max-events"}},
    Hostile{"launch_sender_timeout_negative", "launch @S@/table1/A.json --sender-timeout -1",
            {"--sender-timeout", "expected a number of seconds above 0"}},
    Hostile{"sim_part_bytes_1", "sim --quiet @H@/part_bytes_1.json", {"part_bytes_1.json", "averaging.part_bytes", "1024"}},
    Hostile{"sim_count_1e6", "sim --quiet @H@/count_1e6.json", {"count_1e6.json", "peers[0].count", "100000"}},
    Hostile{"sim_count_1e5", "sim --quiet --strategy ar @H@/count_1e5.json", {"count_1e5.json", "estimated at", "--max-events"}},
    Hostile{"sim_count_1e5_planner", "sim --quiet @H@/count_1e5.json", {"count_1e5.json", ": peers:", "expected at most 256 peers"}},
    Hostile{"sim_rounds_2_32_minus_1", "sim --quiet @H@/rounds_2_32_minus_1.json",
            {"rounds_2_32_minus_1.json", "averaging.rounds", "1000000"}},
    Hostile{"train_metrics_tiny", "train @H@/metrics_tiny.json", {"metrics_tiny.json", "training.metrics_interval_s", "at least 1 s"}},
    Hostile{"train_metrics_1e8_buckets", "train @H@/metrics_1s_1e8s.json", {"metrics_1s_1e8s.json", "estimated at", "--max-memory-gib"}},
    // Silent wrong results.
    Hostile{"sim_params_2_53", "sim --quiet @H@/params_2_53.json", {"params_2_53.json", "workload.parameters", "an integer from 1 to 1000000000000"}},
    Hostile{"sim_params_2_64_minus_2", "sim --quiet @H@/params_2_64_minus_2.json", {"params_2_64_minus_2.json", "workload.parameters"}},
    Hostile{"albert_dht_only", "albert --quiet --scenarios @H@/albert_dht",
            {"albert_dht/high-bandwidth.json", "top level", "swarmlab albert needs a collaboration scenario"}},
    // Path escape.
    Hostile{"name_absolute", "sim --quiet @H@/name_absolute.json", {"name_absolute.json", "name", "expected a scenario name"}},
    Hostile{"name_dotdot", "sim --quiet @H@/name_dotdot.json", {"name_dotdot.json", "name", "expected a scenario name"}},
    Hostile{"name_dot", "sim --quiet @H@/name_dot.json", {"name_dot.json", "name", "not \".\" or \"..\""}},
    Hostile{"name_nul", "sim --quiet @H@/name_nul.json", {"name_nul.json", "name", "\\x00"}},
    Hostile{"name_control", "sim --quiet @H@/name_control.json", {"name_control.json", "name", "\\x1B"}},
    Hostile{"model_slash", "sim --quiet @H@/model_slash.json", {"model_slash.json", "workload.model", "expected a model name"}},
    // Messages without a location.
    Hostile{"sim_zero_bandwidth", "sim --quiet @H@/zero_bandwidth.json",
            {"zero_bandwidth.json", "peers[0].bandwidth_bps", "expected at least 1000 bits/s"}},
    Hostile{"plan_dht_only", "plan @H@/dht_only.json", {"dht_only.json", "top level", "swarmlab plan needs a collaboration scenario"}},
    Hostile{"dht_replacements", "dht --peers 100000 --churn-per-hour 100 --hours 10",
            {"command line", "--churn-per-hour", "expected at most 10000000"}},
    Hostile{"launch_scale_0", "launch @S@/table1/A.json --scale 0", {"--scale", "expected a scale factor above 0", "got \"0\""}},
    Hostile{"validate_scale_0", "validate @S@/table1/A.json --scale 0", {"--scale", "expected a scale factor above 0"}},
    Hostile{"peer_scale_0", "peer @S@/table1/A.json --id 0 --peers 0=127.0.0.1:1 --scale 0",
            {"--scale", "expected a scale factor above 0"}},
    Hostile{"launch_dht_only", "launch @H@/dht_only.json", {"dht_only.json", "top level", "swarmlab launch needs a collaboration scenario"}},
    // Other promises.
    Hostile{"table1_odd_setup_a", "table1 --quiet --scenarios @H@/table1_odd_a",
            {"table1_odd_a/A.json", "workload", "expected the workload and part size every Table 1 setup shares"}},
    Hostile{"launch_huge_parameters", "launch @S@/table1/A.json --parameters 99999999999999",
            {"--parameters", "expected a vector length from 1 to 1000000000"}},
    Hostile{"launch_unknown_congestion", "launch @S@/table1/A.json --congestion nosuchcc", {"--congestion", "\"nosuchcc\""}},
    Hostile{"launch_deadline_0", "launch @S@/table1/A.json --deadline 0", {"--deadline", "expected a number of seconds above 0"}},
    Hostile{"sim_out_dev_null", "sim --quiet @S@/table1/A.json --out /dev/null", {"--out", "/dev/null", "is not a folder"}},
    Hostile{"sim_dev_zero", "sim --quiet /dev/zero", {"/dev/zero", "character device", "expected a regular file"}},
    Hostile{"sim_fifo", "sim --quiet @T@/fifo.json", {"fifo.json", "a FIFO", "expected a regular file"}},
    Hostile{"sim_big_file", "sim --quiet @T@/big.json", {"big.json", "expected at most 16 MiB"}},
    Hostile{"launch_goodput_0", "launch @S@/table1/A.json --goodput 0", {"--goodput", "expected a fraction of the link rate above 0"}},
    Hostile{"launch_pace_all_negative", "launch @S@/table1/A.json --pace-all -5", {"--pace-all", "expected a rate in bits/s above 0"}},
    Hostile{"dht_seed_negative", "dht --seed -1", {"--seed", "expected a seed from 0", "got \"-1\""}},
    Hostile{"moshpit_seed_negative", "moshpit --peers 8 --group-size 2 --failure-rate 0 --rounds 2 --seed -1",
            {"--seed", "expected a seed from 0"}},
    Hostile{"peer_duplicate_ids", "peer @S@/table1/A.json --id 0 --peers 0=127.0.0.1:1,0=127.0.0.1:2",
            {"--peers", "peer 0 is listed twice"}},
    Hostile{"launch_kill_negative_peer", "launch @S@/table1/A.json --kill -1@1+0.5", {"--kill", "expected PEER@ROUND+SECONDS"}},
    // Live Learning@home runs (docs/learning-at-home.md §10).
    Hostile{"launch_dmoe_kill_trainer", "launch @S@/dmoe/fashion-mnist.json --kill 9@5", {"--kill", "expected an expert runtime", "got peer 9"}},
    Hostile{"launch_dmoe_kill_outside", "launch @S@/dmoe/fashion-mnist.json --kill 12@5", {"--kill", "expected a peer index below 12"}},
    Hostile{"launch_dmoe_train", "launch @S@/dmoe/fashion-mnist.json --train", {"fashion-mnist.json is a DMoE run", "--train"}},
    Hostile{"dmoe_runtime_id_outside", "dmoe-runtime @S@/dmoe/fashion-mnist.json --id 99 --peers 0=127.0.0.1:1",
            {"--id", "peer 99 is not in the run (12 peers)"}},
    Hostile{"dmoe_trainer_as_runtime", "dmoe-trainer @S@/dmoe/fashion-mnist.json --id 0 --peers 0=127.0.0.1:1",
            {"peer 0 is not a trainer"}},
    Hostile{"dmoe_converge_seconds_0", "dmoe converge --seconds 0", {"--seconds"}}));
// clang-format on

// The argument generator: every numeric option of the commands above, given each value a careless
// script produces (a negative that would wrap around, NaN, an overflow, hexadecimal, a number past
// 2^64), is refused with exit code 2 and a message naming the option, before anything runs.
TEST(HostileArguments, EveryNumericOptionRefusesEveryHostileValue) {
  const std::string a = std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/A.json";
  const std::vector<std::pair<std::string, std::string>> options = {
      {"sim " + a, "--rounds"}, {"sim " + a, "--max-events"}, {"sim " + a, "--max-memory-gib"},
      {"sweep " + std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/sweeps/training-sizes.json", "--max-events"},
      {"table1", "--rounds"}, {"table1", "--warmup"}, {"plan " + a, "--max-gap"}, {"plan " + a, "--max-mips"},
      {"plan " + a, "--max-mip-nodes"}, {"albert", "--hours"},
      {"train " + a, "--hours"}, {"dht", "--peers"}, {"dht", "--churn-per-hour"}, {"dht", "--hours"},
      {"dht", "--seed"}, {"dht", "--gets-per-peer-hour"}, {"dht", "--puts-per-peer-hour"},
      {"groupsize --failure-rate 0.1", "--peers"}, {"groupsize --peers 16", "--failure-rate"},
      {"moshpit --group-size 2 --failure-rate 0 --rounds 2 --seed 1", "--peers"},
      {"moshpit --peers 8 --failure-rate 0 --rounds 2 --seed 1", "--group-size"},
      {"moshpit --peers 8 --group-size 2 --rounds 2 --seed 1", "--failure-rate"},
      {"moshpit --peers 8 --group-size 2 --failure-rate 0 --seed 1", "--rounds"},
      {"moshpit --peers 8 --group-size 2 --failure-rate 0 --rounds 2", "--seed"},
      {"moshpit --peers 8 --group-size 2 --failure-rate 0 --rounds 2 --seed 1", "--dim"},
      {"launch " + a, "--rounds"}, {"launch " + a, "--parameters"}, {"launch " + a, "--scale"},
      {"launch " + a, "--goodput"}, {"launch " + a, "--pace-all"}, {"launch " + a, "--sender-timeout"},
      {"launch " + a, "--deadline"}, {"launch " + a, "--restart-after"},
      {"dmoe throughput", "--trainers"}, {"dmoe throughput", "--gpu-tflops"}, {"dmoe throughput", "--measure-s"},
      {"dmoe throughput", "--delays-ms"}, {"dmoe throughput", "--seed"}, {"dmoe swarm", "--runtimes"},
      {"dmoe swarm", "--trainers"}, {"dmoe swarm", "--grid-side"}, {"dmoe swarm", "--hours"},
      {"dmoe swarm", "--churn-per-hour"}, {"dmoe swarm", "--packet-loss"}, {"dmoe swarm", "--announce-period-s"},
      {"dmoe swarm", "--seed"}};
  const fs::path cwd = fs::temp_directory_path() / ("swarmlab-args-" + std::to_string(getpid()));
  fs::create_directories(cwd);
  std::vector<std::string> lines;
  for (const auto& [command, option] : options)
    for (const char* value : {"-1", "nan", "1e308", "0x10", "18446744073709551616"})
      lines.push_back(command + " " + option + " " + value);
  // Four at a time: each run is mostly process start-up.
  for (std::size_t first = 0; first < lines.size(); first += 4) {
    std::vector<std::future<LimitedRun>> runs;
    for (std::size_t i = first; i < std::min(first + 4, lines.size()); ++i)
      runs.push_back(std::async(std::launch::async, [&, i] { return run_limited(lines[i], cwd); }));
    for (std::size_t i = first; i < std::min(first + 4, lines.size()); ++i) {
      const LimitedRun r = runs[i - first].get();
      const std::string option = lines[i].substr(0, lines[i].rfind(' '));
      EXPECT_EQ(r.exit_code, 2) << lines[i] << ":\n" << r.out;
      EXPECT_NE(r.out.find(option.substr(option.rfind(' ') + 1)), std::string::npos) << lines[i] << ":\n" << r.out;
      EXPECT_LT(r.wall_s, kMaxWallS) << lines[i];
    }
  }
  fs::remove_all(cwd);
}

// A legal run fits the same limits (so the limits above are not what makes the corpus fail).
TEST(HostileInputLimits, ALegalRunFitsTheLimits) {
  const fs::path cwd = fs::temp_directory_path() / ("swarmlab-legal-" + std::to_string(getpid()));
  fs::create_directories(cwd);
  const LimitedRun r = run_limited("sim --quiet --rounds 2 " + std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/A.json", cwd);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(cwd / "out" / "table1-A" / "results.json"));
  fs::remove_all(cwd);
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Same scenario and seed, byte-identical files, whatever path the scenario was typed as; no
// wall-clock figure and no typed path in them (those go to run-info.json).
TEST(HostileInputLimits, OutputsAreByteIdenticalAndCarryNoClockOrPath) {
  const fs::path cwd = fs::temp_directory_path() / ("swarmlab-determinism-" + std::to_string(getpid()));
  fs::create_directories(cwd);
  const std::string src = SWARMLAB_SOURCE_DIR;
  struct Case {
    std::string scenario;
    std::vector<std::string> files;
  };
  for (const Case& c : {Case{"tests/cli/hostile/dht_small.json", {"results.json"}},
                        Case{"scenarios/table1/A.json", {"results.json", "rounds.csv", "trace.json"}}}) {
    const LimitedRun a = run_limited("sim --quiet --rounds 2 --out " + (cwd / "a").string() + " " + src + "/" + c.scenario, cwd);
    ASSERT_EQ(a.exit_code, 0) << a.out;
    fs::copy(src + "/" + c.scenario, cwd / "copy.json", fs::copy_options::overwrite_existing);
    const LimitedRun b = run_limited("sim --quiet --rounds 2 --out b copy.json", cwd);
    ASSERT_EQ(b.exit_code, 0) << b.out;
    for (const auto& f : c.files) {
      const std::string x = slurp(cwd / "a" / f), y = slurp(cwd / "b" / f);
      EXPECT_FALSE(x.empty()) << c.scenario << " " << f;
      EXPECT_EQ(x, y) << c.scenario << " " << f;
      EXPECT_EQ(x.find("wall"), std::string::npos) << c.scenario << " " << f;
      EXPECT_EQ(x.find(src), std::string::npos) << c.scenario << " " << f;
    }
    EXPECT_NE(slurp(cwd / "a" / "run-info.json").find(src), std::string::npos);
  }
  // train --out (albert --out writes the same files per setup).
  const std::string sc = src + "/scenarios/albert/heterogeneous.json";
  fs::copy(sc, cwd / "h.json", fs::copy_options::overwrite_existing);
  ASSERT_EQ(run_limited("train --hours 0.5 --out " + (cwd / "ta").string() + " " + sc, cwd).exit_code, 0);
  ASSERT_EQ(run_limited("train --hours 0.5 --out tb h.json", cwd).exit_code, 0);
  for (const char* f : {"albert-heterogeneous.json", "albert-heterogeneous_series.csv", "albert-heterogeneous_peers.csv",
                        "albert-heterogeneous_steps.csv"}) {
    const std::string x = slurp(cwd / "ta" / f), y = slurp(cwd / "tb" / f);
    EXPECT_FALSE(x.empty()) << f;
    EXPECT_EQ(x, y) << f;
    EXPECT_EQ(x.find(src), std::string::npos) << f;
  }
  fs::remove_all(cwd);
}

}  // namespace
}  // namespace swarmlab::cli::testing
