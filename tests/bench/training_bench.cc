// Wall time of simulating collaborative training: the five ALBERT setups (docs/dedloc.md §6) under
// both coordinations, and a 32-peer collaboration with churn. Issue 11's target: all five setups ×
// 48 h with dht coordination in under 60 s on a 2-core machine; oracle coordination about 1 s.
// Run: ./build/swarmlab_bench --benchmark_filter=Albert
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"

namespace {

const char* kSetups[] = {"high-bandwidth", "heterogeneous", "heterogeneous-lb", "auxiliary", "time-varying"};

std::vector<swarmlab::scenarios::Scenario> albert_setups() {
  std::vector<swarmlab::scenarios::Scenario> out;
  for (const char* s : kSetups)
    out.push_back(swarmlab::scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/albert/" + s + ".json"));
  return out;
}

// All five setups, `hours` simulated each, one after the other (what `swarmlab albert` runs).
void run_albert(benchmark::State& state, swarmlab::scenarios::Coordination coordination) {
  const auto setups = albert_setups();
  swarmlab::sim::TrainingRunConfig cfg;
  cfg.coordination = coordination;
  cfg.duration_s = static_cast<double>(state.range(0)) * 3600;
  std::uint64_t steps = 0;
  for (auto _ : state)
    for (const auto& sc : setups) steps += swarmlab::sim::run_training(sc, cfg).steps;
  benchmark::DoNotOptimize(steps);
  state.counters["sim_hours_per_s"] =
      benchmark::Counter(5.0 * static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.SetLabel("5 setups x " + std::to_string(state.range(0)) + " h");
}

void BM_AlbertOracle(benchmark::State& state) { run_albert(state, swarmlab::scenarios::Coordination::Oracle); }
BENCHMARK(BM_AlbertOracle)->Arg(48)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// Every peer coordinates itself through the DHT. 2 h for a quick figure; 48 h is the target's run
// (README.md, "Training").
void BM_AlbertDht(benchmark::State& state) { run_albert(state, swarmlab::scenarios::Coordination::Dht); }
BENCHMARK(BM_AlbertDht)->Arg(2)->Arg(48)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

// What the targets are about: `swarmlab albert` as a user runs it (the setups in parallel
// processes, one per core), wall time; beside the in-process runs above, one after the other,
// measured in the same session.
void run_albert_command(benchmark::State& state, const std::string& coordination) {
  const std::string command = std::string(SWARMLAB_BINARY) + " albert --coordination " + coordination +
                              " --quiet --hours " + std::to_string(state.range(0)) + " --scenarios " +
                              SWARMLAB_SOURCE_DIR + "/scenarios/albert > /dev/null";
  for (auto _ : state)
    if (std::system(command.c_str()) != 0) state.SkipWithError(("failed: " + command).c_str());
  state.SetLabel("5 setups x " + std::to_string(state.range(0)) + " h, " +
                 std::to_string(std::thread::hardware_concurrency()) + " cores");
}
void BM_AlbertOracleCommand(benchmark::State& state) { run_albert_command(state, "oracle"); }
BENCHMARK(BM_AlbertOracleCommand)->Arg(48)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1)->Repetitions(5)->ReportAggregatesOnly(true);
void BM_AlbertDhtCommand(benchmark::State& state) { run_albert_command(state, "dht"); }
BENCHMARK(BM_AlbertDhtCommand)->Arg(2)->Arg(48)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

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

// A 256-peer collaboration for 24 simulated hours with oracle coordination (issue 15's flow-model
// target): the heterogeneous-lb mix (T4 workers at 200 / 100 / 50 Mb/s, planner roles) ×16.
void BM_TwoHundredFiftySixPeers24h(benchmark::State& state) {
  auto sc = swarmlab::scenarios::load_scenario(std::string(SWARMLAB_SOURCE_DIR) + "/scenarios/albert/heterogeneous-lb.json");
  for (auto& p : sc.peers) p.name += "-x";
  const auto base = sc.peers;
  sc.peers.clear();
  for (int copy = 0; copy < 16; ++copy)
    for (auto p : base) {
      p.name = p.name + std::to_string(copy);
      sc.peers.push_back(p);
    }
  swarmlab::sim::TrainingRunConfig cfg;
  cfg.duration_s = 24 * 3600;
  std::uint64_t steps = 0;
  for (auto _ : state) steps = swarmlab::sim::run_training(sc, cfg).steps;
  state.counters["steps"] = static_cast<double>(steps);
  state.SetLabel(std::to_string(sc.peers.size()) + " peers, 24 h");
}
BENCHMARK(BM_TwoHundredFiftySixPeers24h)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

}  // namespace
