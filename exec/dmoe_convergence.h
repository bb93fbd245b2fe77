#pragma once
// Learning@home's convergence experiment, live and scaled to one machine (docs/learning-at-home.md
// §10): a model of DMoE layers against the dense baseline of equal compute, each trained by
// asynchronous trainers in two regimes, high delay (many trainers, long pauses after every expert
// call) and low delay (few trainers, short pauses). The paper's 64 trainers at 1 s and 16 at
// 100 ms become 8 and 2 here (trainers ÷ 8, delays kept). Four launches (exec/dmoe_launch.h) of the
// same duration, each in <out>/<run>/; then <out>/convergence.csv (the first trainer's test
// accuracy over time) and <out>/loss.csv (every trainer's batch losses) for the plot.
#include <functional>
#include <string>
#include <vector>

#include "exec/dmoe_launch.h"

namespace swarmlab::exec {

struct DmoeConvergenceConfig {
  scenarios::DmoeLiveScenario base;  // model, runtimes, timeouts; its trainers, delay and dense are set per run
  double seconds = 120;              // each run's training time
  std::uint32_t high_delay_trainers = 8, low_delay_trainers = 2;
  double high_delay_s = 1.0, low_delay_s = 0.1;
  std::string out_dir;
  std::string executable, data_dir;
  std::function<void(const std::string&)> progress;
};

struct DmoeConvergenceRun {
  std::string name;    // dmoe-high, dmoe-low, dense-high, dense-low
  bool dense = false;
  bool high_delay = false;
  scenarios::DmoeLiveScenario scenario;
  DmoeLaunchResult result;
};

std::vector<DmoeConvergenceRun> run_dmoe_convergence(const DmoeConvergenceConfig& config);

}  // namespace swarmlab::exec
