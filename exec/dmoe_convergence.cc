#include "exec/dmoe_convergence.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace swarmlab::exec {

std::vector<DmoeConvergenceRun> run_dmoe_convergence(const DmoeConvergenceConfig& c) {
  std::filesystem::create_directories(c.out_dir);
  std::vector<DmoeConvergenceRun> runs;
  for (const bool dense : {false, true})
    for (const bool high : {true, false}) {
      DmoeConvergenceRun r;
      r.name = std::string(dense ? "dense" : "dmoe") + (high ? "-high" : "-low");
      r.dense = dense;
      r.high_delay = high;
      r.scenario = c.base;
      r.scenario.name = c.base.name + "-" + r.name;
      r.scenario.dense = dense;
      r.scenario.trainers = high ? c.high_delay_trainers : c.low_delay_trainers;
      r.scenario.delay_s = high ? c.high_delay_s : c.low_delay_s;
      r.scenario.duration_s = c.seconds;
      // About eight evaluations per run: the first trainer makes ~30 batches a minute at low delay
      // (~300 in 120 s with 2 in flight), ~15 at high delay.
      r.scenario.eval_every = static_cast<std::uint32_t>(std::max(1.0, c.seconds / 120 * (high ? 4 : 40)));
      runs.push_back(std::move(r));
    }
  std::ofstream accuracy(c.out_dir + "/convergence.csv"), loss(c.out_dir + "/loss.csv");
  accuracy << "run,time_s,batch,test_accuracy\n";
  loss << "run,time_s,trainer,loss\n";
  for (DmoeConvergenceRun& r : runs) {
    if (c.progress) c.progress(r.name + ": " + std::to_string(r.scenario.trainers) + " trainers, mean delay " +
                               std::to_string(static_cast<int>(r.scenario.delay_s * 1000)) + " ms, " +
                               std::to_string(static_cast<int>(c.seconds)) + " s");
    DmoeLaunchOptions o;
    o.scenario = r.scenario;
    o.out_dir = c.out_dir + "/" + r.name;
    o.executable = c.executable;
    o.data_dir = c.data_dir;
    r.result = launch_dmoe(o);
    // Times from the first batch of the run, so the four curves share an origin.
    std::ifstream batches(o.out_dir + "/batches.csv"), evals(o.out_dir + "/evals.csv");
    std::string line;
    std::vector<std::vector<std::string>> rows;
    auto split = [](const std::string& s) {
      std::vector<std::string> f;
      std::size_t at = 0;
      for (std::size_t comma; (comma = s.find(',', at)) != std::string::npos; at = comma + 1) f.push_back(s.substr(at, comma - at));
      f.push_back(s.substr(at));
      return f;
    };
    double origin = -1;
    std::getline(batches, line);
    while (std::getline(batches, line)) {
      rows.push_back(split(line));
      const double t = std::stod(rows.back()[0]);
      if (origin < 0 || t < origin) origin = t;
    }
    for (const auto& f : rows) loss << r.name << ',' << std::stod(f[0]) - origin << ',' << f[1] << ',' << f[3] << '\n';
    std::getline(evals, line);
    while (std::getline(evals, line)) {
      const auto f = split(line);
      accuracy << r.name << ',' << std::stod(f[0]) - origin << ',' << f[1] << ',' << f[2] << '\n';
    }
  }
  return runs;
}

}  // namespace swarmlab::exec
