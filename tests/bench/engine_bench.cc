// Event throughput of the discrete-event engine next to ns-3's own simulator, in one process: the
// hold model, a steady population of N pending events (100 and 10,000), each of which is a no-op
// that schedules its successor at a pseudo-random delay of 0 to ~1 s (the typical shape of a
// simulation). 10^6 events per iteration; the events/s counter is per CPU second.
//   BM_EngineHold<W>/N               swarmlab's Engine (sim/engine.h); each event's callback
//                                    captures W words (1: a pointer; 4: 32 bytes)
//   BM_Ns3Hold/N/S                   ns3::Simulator with scheduler S: 0 Map (ns-3's default),
//                                    1 Heap, 2 Calendar
// ns-3 allocates an EventImpl per event whatever it carries. The ratio that matters:
// BM_EngineHold<W>/N events/s over BM_Ns3Hold/N/0 events/s (target >= 1.5).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "ns3_hold/ns3_hold.h"
#include "sim/engine.h"

namespace {

constexpr std::uint64_t kEvents = 1'000'000;

struct Hold {
  swarmlab::sim::Engine* engine;
  std::uint64_t x = 1;
  std::uint64_t remaining = 0;
};

// What an event carries: a pointer (8 bytes), or a pointer and three words (32 bytes, a lambda
// capturing four references or values, which outgrows std::function's inline buffer).
template <int Words>
struct Payload {
  Hold* h;
  std::uint64_t pad[Words - 1];
};
template <>
struct Payload<1> {
  Hold* h;
};

// Same generator and delays as the ns-3 side (tests/bench/ns3_hold/ns3_hold.cc).
template <int Words>
void tick(Payload<Words> p) {
  Hold* h = p.h;
  if (h->remaining == 0) return;
  --h->remaining;
  h->x = h->x * 6364136223846793005ull + 1442695040888963407ull;
  h->engine->after(static_cast<double>(h->x >> 44) * 1e-6, [p] { tick(p); });
}

template <int Words>
void BM_EngineHold(benchmark::State& state) {
  const auto population = static_cast<std::uint32_t>(state.range(0));
  std::uint64_t events = 0;
  for (auto _ : state) {
    swarmlab::sim::Engine engine;
    Hold h{&engine, 1, kEvents - population};
    const Payload<Words> p{&h};
    for (std::uint32_t i = 0; i < population; ++i) engine.at(static_cast<double>(i) * 1e-6, [p] { tick(p); });
    engine.run();
    events += engine.events_processed();
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(sizeof(Payload<Words>)) + "-byte callback");
}
BENCHMARK(BM_EngineHold<1>)->Arg(100)->Arg(10'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EngineHold<4>)->Arg(100)->Arg(10'000)->Unit(benchmark::kMillisecond);

void BM_Ns3Hold(benchmark::State& state) {
  const auto population = static_cast<std::uint32_t>(state.range(0));
  const auto scheduler = static_cast<swarmlab::bench::Ns3Scheduler>(state.range(1));
  std::uint64_t events = 0;
  for (auto _ : state) events += swarmlab::bench::ns3_hold(scheduler, population, kEvents);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.SetLabel(swarmlab::bench::ns3_scheduler_name(scheduler));
}
BENCHMARK(BM_Ns3Hold)->ArgsProduct({{100, 10'000}, {0, 1, 2}})->Unit(benchmark::kMillisecond);

}  // namespace
