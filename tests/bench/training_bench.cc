// Wall time of simulating 48 h of collaborative training: the ALBERT setups, and a 32-peer
// collaboration (the time-varying setup plus four more T4 workers) with churn.
#include <benchmark/benchmark.h>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"

namespace {

const char* kSetups[] = {"high-bandwidth", "heterogeneous", "heterogeneous-lb", "auxiliary", "time-varying"};

void BM_Albert48h(benchmark::State& state) {
  const auto sc = swarmlab::scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/albert/" +
                                                     kSetups[state.range(0)] + ".json");
  for (auto _ : state) benchmark::DoNotOptimize(swarmlab::sim::run_training(sc).steps);
  state.SetLabel(kSetups[state.range(0)]);
}
BENCHMARK(BM_Albert48h)->DenseRange(0, 4)->Unit(benchmark::kMillisecond);

void BM_ThirtyTwoPeers48h(benchmark::State& state) {
  auto sc = swarmlab::scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/albert/time-varying.json");
  for (int i = 0; i < 4; ++i) {
    auto p = sc.peers[0];
    p.name = "extra-" + std::to_string(i);
    sc.peers.push_back(p);
  }
  for (auto _ : state) benchmark::DoNotOptimize(swarmlab::sim::run_training(sc).steps);
  state.SetLabel(std::to_string(sc.peers.size()) + " peers");
}
BENCHMARK(BM_ThirtyTwoPeers48h)->Unit(benchmark::kMillisecond);

// The same setups with every peer coordinating itself through the DHT (progress records,
// matchmaking), one simulated hour: the price of leaving the exact-coordination shortcut.
void BM_AlbertDhtCoordinated1h(benchmark::State& state) {
  const auto sc = swarmlab::scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/albert/" +
                                                     kSetups[state.range(0)] + ".json");
  swarmlab::sim::TrainingRunConfig cfg;
  cfg.coordination = swarmlab::scenarios::Coordination::Dht;
  cfg.duration_s = 3600;
  for (auto _ : state) benchmark::DoNotOptimize(swarmlab::sim::run_training(sc, cfg).steps);
  state.SetLabel(kSetups[state.range(0)]);
}
BENCHMARK(BM_AlbertDhtCoordinated1h)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
