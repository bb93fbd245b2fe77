// Speed of the ns-3 backend on a 24-peer all-to-all exchange (every peer streams 512 KiB parts to
// every other, as a butterfly round does): simulated bytes per wall second, ns-3 events per second.
// Peers: 8 at 1 Gb/s and 16 at 200 Mb/s (DeDLOC Table 1 setup C), 25 ms one-way latency.
// Argument: the MTU (65000, the default GSO-sized packets, or 1500 for per-frame fidelity).
#include <benchmark/benchmark.h>

#include <algorithm>

#include "sim/network/ns3/ns3_network.h"

namespace {

using namespace swarmlab::sim;

void BM_Ns3Exchange24(benchmark::State& state) {
  const auto mtu = static_cast<std::uint32_t>(state.range(0));
  // Per-frame packets cost ~45^2 more (segments x segments in flight), so they move less data.
  const std::uint64_t per_pair = mtu >= 9000 ? 2'000'000 : 100'000;
  const std::uint64_t part = 512 * 1024;
  std::uint64_t bytes = 0, events = 0;
  for (auto _ : state) {
    Engine engine;
    std::vector<LinkSpec> links;
    for (int i = 0; i < 24; ++i) {
      const double bps = i < 8 ? 1e9 : 2e8;
      links.push_back(LinkSpec{bps, bps, 0.025});
    }
    Ns3Options options;
    options.mtu_bytes = mtu;
    Ns3Network net(engine, links, options);
    for (PeerId i = 0; i < 24; ++i)
      for (PeerId j = 0; j < 24; ++j)
        if (i != j)
          for (std::uint64_t off = 0; off < per_pair; off += part)
            net.transmit(i, j, std::min(part, per_pair - off), [](const TransferOutcome&) {});
    engine.run();
    bytes += net.bytes_delivered();
    events += net.ns3_events() + engine.events_processed();
  }
  state.counters["bytes_per_s"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsRate);
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_Ns3Exchange24)->Arg(65000)->Arg(1500)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
