#pragma once
// `swarmlab launch <dmoe scenario>`: a live Learning@home run on this machine (docs/learning-at-home.md
// §10). Starts the scenario's expert runtimes (`dmoe-runtime`, peers 0..R-1) and trainers
// (`dmoe-trainer`, peers R..) over loopback TCP, SIGKILLs the runtimes named by `kills` at their
// times, and once every trainer has finished asks the runtimes to leave (SIGTERM). It gathers the
// processes' JSON lines into results.json, batches.csv (every trainer's batches) and evals.csv (the
// first trainer's test accuracy).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/dmoe_live.h"

namespace swarmlab::exec {

struct DmoeLaunchOptions {
  scenarios::DmoeLiveScenario scenario;
  std::string out_dir;                 // required; the effective scenario is written there
  std::string executable;              // default: this executable
  std::string data_dir;                // Fashion-MNIST (default: Debian's)
  std::vector<std::pair<std::uint32_t, double>> kills;  // runtime peer, seconds after the start
  double deadline_s = 0;               // 0: the scenario's duration + 120 s
  std::function<void(const std::string&)> progress;
};

struct DmoeLaunchResult {
  std::string out_dir;
  bool ok = false;                     // every trainer finished a batch and exited 0, nothing timed out
  bool interrupted = false, timed_out = false;
  std::uint64_t batches = 0, dropped = 0;
  std::uint64_t failed_calls = 0, timed_out_calls = 0;
  double samples_per_s = 0;            // training images per second over the run, all trainers
  std::optional<double> final_test_accuracy;  // the first trainer's, on the whole test set
  std::uint64_t taken_over = 0, restarted_fresh = 0;  // experts, by the surviving runtimes
  std::vector<std::uint32_t> killed;
  std::vector<int> exit_codes;
  std::string results_json;
};

DmoeLaunchResult launch_dmoe(const DmoeLaunchOptions& options);

}  // namespace swarmlab::exec
