// Wall time of simulating one Table 1 cell (one averaging round of ResNet-50) on the flow backend.
#include <benchmark/benchmark.h>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"

namespace {

void BM_Table1Cell(benchmark::State& state) {
  static const char* setups[] = {"A", "B", "C", "D"};
  const auto sc = swarmlab::scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/table1/" +
                                                     setups[state.range(0)] + ".json");
  swarmlab::sim::AveragingRunConfig cfg;
  cfg.strategy = static_cast<swarmlab::core::averaging::Strategy>(state.range(1));
  for (auto _ : state) benchmark::DoNotOptimize(swarmlab::sim::run_averaging(sc, cfg).mean_round_s);
  state.SetLabel(std::string(setups[state.range(0)]) + "/" +
                 std::string(swarmlab::core::averaging::name(cfg.strategy)));
}
BENCHMARK(BM_Table1Cell)->ArgsProduct({{0, 1, 2, 3}, {0, 1, 2}})->Unit(benchmark::kMillisecond);

}  // namespace
