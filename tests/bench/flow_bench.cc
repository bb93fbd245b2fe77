// Cost of one max-min recomputation of the fluid model with N concurrent flows among 100 peers
// (every flow shares uploads and downloads with others, so the whole set is one component).
// Target: 1,000 flows in under 1 ms.
#include <benchmark/benchmark.h>

#include "sim/network/flow_network.h"

namespace {

using namespace swarmlab::sim;

void BM_FlowRecomputeAll(benchmark::State& state) {
  const auto flows = static_cast<std::uint32_t>(state.range(0));
  const std::uint32_t peers = 100;
  Engine engine;
  std::vector<LinkSpec> links;
  for (std::uint32_t i = 0; i < peers; ++i) links.push_back({1e8 * (1 + i % 7), 1e8 * (1 + i % 5), 0.01});
  FlowNetwork net(engine, links);
  std::uint32_t made = 0;
  for (std::uint32_t d = 1; made < flows; ++d)
    for (std::uint32_t i = 0; i < peers && made < flows; ++i, ++made)
      net.transmit(i, (i + d) % peers, 1ull << 40, [](const TransferOutcome&) {});
  engine.run_until(0);
  for (auto _ : state) net.recompute_all();
  state.counters["flows"] = static_cast<double>(net.active_flows());
}
BENCHMARK(BM_FlowRecomputeAll)->Arg(100)->Arg(1'000)->Arg(10'000)->Unit(benchmark::kMicrosecond);

// One butterfly-style burst: every peer starts a flow to every other at the same instant, and the
// burst is absorbed by one recomputation.
void BM_FlowBurstStart(benchmark::State& state) {
  const auto peers = static_cast<std::uint32_t>(state.range(0));
  for (auto _ : state) {
    Engine engine;
    FlowNetwork net(engine, std::vector<LinkSpec>(peers, LinkSpec{1e9, 1e9, 0.005}));
    for (std::uint32_t i = 0; i < peers; ++i)
      for (std::uint32_t j = 0; j < peers; ++j)
        if (i != j) net.transmit(i, j, 1 << 20, [](const TransferOutcome&) {});
    engine.run();
  }
}
BENCHMARK(BM_FlowBurstStart)->Arg(8)->Arg(24)->Arg(64)->Unit(benchmark::kMillisecond);

}  // namespace
