// Learning@home benchmarks (docs/learning-at-home.md §8): the internet-scale run (10,000 runtimes,
// one simulated hour, which must take under two minutes) and the throughput experiment. Run
// ./build/swarmlab_bench --benchmark_filter=Dmoe.
#include <benchmark/benchmark.h>

#include "sim/experiments/dmoe_swarm.h"
#include "sim/experiments/dmoe_throughput.h"

namespace swarmlab {
namespace {

// Joining and settling, then one simulated hour with the defaults (1% churn per hour, 0.33% loss).
// `measured_hour_s` is the wall time of the hour alone; the benchmark's own time includes the join.
void BM_DmoeSwarm(benchmark::State& state) {
  sim::DmoeSwarmConfig c;
  c.runtimes = static_cast<std::uint32_t>(state.range(0));
  c.hours = 1;
  for (auto _ : state) {
    const sim::DmoeSwarmResult r = sim::run_dmoe_swarm(c);
    state.counters["measured_hour_s"] = r.wall_measured_s;
    state.counters["join_s"] = r.wall_s - r.wall_measured_s;
    state.counters["found_k"] = r.found_k_share;
    state.counters["mean_lookups"] = r.mean_lookups;
    state.counters["samples_per_s"] = r.samples_per_s;
    state.counters["events_per_s"] = static_cast<double>(r.events) / r.wall_s;
  }
}
BENCHMARK(BM_DmoeSwarm)->Arg(1000)->Arg(10000)->Unit(benchmark::kSecond)->Iterations(1);

// Both block types, six delays, three methods.
void BM_DmoeThroughput(benchmark::State& state) {
  for (auto _ : state)
    for (const auto block : {sim::DmoeBlock::FeedForward, sim::DmoeBlock::Transformer}) {
      sim::DmoeThroughputConfig c;
      c.block = block;
      c.mean_delays_s = {0, 0.025, 0.05, 0.1, 0.15, 0.2};
      benchmark::DoNotOptimize(sim::run_dmoe_throughput(c));
    }
}
BENCHMARK(BM_DmoeThroughput)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace swarmlab
