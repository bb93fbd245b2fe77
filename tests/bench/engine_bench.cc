// Event throughput of the discrete-event engine: a steady population of pending events, each of
// which schedules its successor (the typical shape of a simulation). Target: >= 1 M events/s.
#include <benchmark/benchmark.h>

#include "sim/engine.h"

namespace {

void BM_EngineEventsPerSecond(benchmark::State& state) {
  const auto population = static_cast<int>(state.range(0));
  for (auto _ : state) {
    swarmlab::sim::Engine engine;
    std::uint64_t x = 1;
    int remaining = 1'000'000;
    std::function<void()> tick = [&] {
      if (--remaining <= 0) return;
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      engine.after(static_cast<double>(x >> 44) * 1e-6, tick);
    };
    for (int i = 0; i < population; ++i) engine.at(static_cast<double>(i) * 1e-6, tick);
    engine.run();
    benchmark::DoNotOptimize(engine.events_processed());
    state.counters["events/s"] =
        benchmark::Counter(static_cast<double>(engine.events_processed()), benchmark::Counter::kIsRate);
  }
}
BENCHMARK(BM_EngineEventsPerSecond)->Arg(100)->Arg(10'000)->Unit(benchmark::kMillisecond);

}  // namespace
