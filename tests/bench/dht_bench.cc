// DHT benchmarks: the scale experiment (the 10,000-peer, one-hour run must take under two minutes)
// and the hot paths under it, each with hivemind's 160-bit ids and Hydra's configuration (256-bit
// ids; docs/hydra.md §1) side by side: the second argument is the id width.
// Run ./build/swarmlab_bench --benchmark_filter=Dht.
#include <benchmark/benchmark.h>

#include <optional>
#include <string>
#include <vector>

#include "core/dht/config.h"
#include "core/dht/messages.h"
#include "core/dht/routing_table.h"
#include "core/dht/sha1.h"
#include "core/dht/value_store.h"
#include "sim/experiments/dht_experiment.h"

namespace swarmlab {
namespace {

// Joining and settling, then one simulated hour with 10% churn per hour. `measured_hour_s` is the
// wall time of the hour alone; the benchmark's own time includes the join.
void BM_DhtExperiment(benchmark::State& state) {
  sim::DhtExperimentConfig c;
  c.peers = static_cast<std::uint32_t>(state.range(0));
  if (state.range(1) == core::dht::kHydraIdBits) c.dht = core::dht::hydra_dht_config();
  c.churn_per_hour = 0.1;
  c.hours = 1;
  for (auto _ : state) {
    const sim::DhtExperimentResult r = sim::run_dht_experiment(c);
    state.counters["measured_hour_s"] = r.wall_measured_s;
    state.counters["join_s"] = r.wall_s - r.wall_measured_s;
    state.counters["get_success"] = r.get_success_rate;
    state.counters["hops_median"] = r.hops_median;
    state.counters["events"] = static_cast<double>(r.events);
    state.counters["events_per_s"] = static_cast<double>(r.events) / r.wall_s;
  }
}
BENCHMARK(BM_DhtExperiment)
    ->ArgsProduct({{1000, 10000}, {core::dht::kKademliaIdBits, core::dht::kHydraIdBits}})
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

// One replica's store as a collaboration uses it: 256 peers each republish their progress (a
// subkey of one key) and a declaration of their own (a plain key) every 2 s, each valid for 10 s.
// Argument 1: as stores from the network, charged to their publisher (core/dht/publisher_ledger.h);
// 0: the same stores as the node's own, which nothing charges. The ratio of the two is the cost of
// the per-publisher share.
void BM_DhtValueStoreRepublish(benchmark::State& state) {
  const bool charged = state.range(0) != 0;
  constexpr int kPeers = 256;
  std::vector<core::dht::NodeId> keys;
  std::vector<core::dht::Bytes> subkeys;
  for (int p = 0; p < kPeers; ++p) {
    keys.push_back(core::dht::NodeId::of_key(std::string("declaration.").append(std::to_string(p))));
    const std::string sub = std::string("peer").append(std::to_string(p));
    subkeys.emplace_back(sub.begin(), sub.end());
  }
  const core::dht::NodeId progress = core::dht::NodeId::of_key("progress");
  core::dht::ValueStore store = core::dht::ValueStore::from(core::dht::DhtConfig{});
  const core::dht::Bytes value(64, 7);
  double now = 0;
  for (auto _ : state) {
    for (core::PeerId p = 0; p < kPeers; ++p) {
      const std::optional<core::PeerId> from = charged ? std::optional<core::PeerId>(p) : std::nullopt;
      benchmark::DoNotOptimize(store.store(progress, &subkeys[p], {value, now + 10}, now, from));
      benchmark::DoNotOptimize(store.store(keys[p], nullptr, {value, now + 10}, now, from));
    }
    now += 2;
  }
  state.SetItemsProcessed(state.iterations() * 2 * kPeers);
}
BENCHMARK(BM_DhtValueStoreRepublish)->Arg(0)->Arg(1);

void BM_DhtRoutingTableClosest(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  core::Rng rng(1);
  const core::dht::NodeId self = core::dht::NodeId::random(rng, bits);
  core::dht::RoutingTable table(self, 20, 20);
  for (core::PeerId p = 0; p < 10000; ++p) table.update({core::dht::NodeId::random(rng, bits), p}, 0);
  std::vector<core::dht::NodeId> targets;
  for (int i = 0; i < 1024; ++i) targets.push_back(core::dht::NodeId::random(rng, bits));
  std::vector<core::dht::Contact> out;
  std::size_t i = 0;
  for (auto _ : state) {
    table.closest(targets[i++ % targets.size()], 20, nullptr, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["table_size"] = static_cast<double>(table.size());
}
BENCHMARK(BM_DhtRoutingTableClosest)->Arg(core::dht::kKademliaIdBits)->Arg(core::dht::kHydraIdBits);

void BM_DhtEncodeDecodeFindNodeResponse(benchmark::State& state) {
  const int bits = static_cast<int>(state.range(0));
  core::Rng rng(2);
  core::dht::DhtMessage m;
  m.kind = core::dht::MessageKind::FindNodeResponse;
  m.id_bits = bits;
  m.sender = core::dht::NodeId::random(rng, bits);
  for (core::PeerId p = 0; p < 20; ++p) m.contacts.push_back({core::dht::NodeId::random(rng, bits), p});
  core::dht::WireLimits limits;
  limits.id_bits = bits;
  for (auto _ : state) {
    std::vector<std::uint8_t> bytes;
    core::dht::encode(m, bytes);
    benchmark::DoNotOptimize(core::dht::decode(bytes, limits));
  }
}
BENCHMARK(BM_DhtEncodeDecodeFindNodeResponse)->Arg(core::dht::kKademliaIdBits)->Arg(core::dht::kHydraIdBits);

void BM_DhtSha1(benchmark::State& state) {
  const std::vector<std::uint8_t> data(static_cast<std::size_t>(state.range(0)), 0x5A);
  for (auto _ : state) benchmark::DoNotOptimize(core::dht::sha1(data));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_DhtSha1)->Arg(32)->Arg(4096);

}  // namespace
}  // namespace swarmlab
