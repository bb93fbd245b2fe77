// Cost of one max-min recomputation of the fluid model with N concurrent flows among 100 peers
// (every flow shares uploads and downloads with others, so the whole set is one component).
// Target: 1,000 flows in under 1 ms.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>

#include "core/averaging/role_assignment.h"
#include "core/averaging/round_plan.h"
#include "sim/binding/sim_world.h"
#include "sim/network/flow_network.h"
#include "averaging_swarm.h"

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

// One butterfly all-reduce round of N peers on the flow model, wired as the simulator wires a
// collaboration (SimWorld, an AveragingService behind a ServiceMux per peer): ResNet-50's gradient
// (25,557,032 parameters, fp16, sizes only), equal shares, 512 KiB parts, 25 ms one-way latency.
// Links as in DeDLOC's setup C: a third of the peers at 1 Gb/s, the rest at 200 Mb/s. Every peer
// streams its part of every other peer's span and gets the averaged parts back: N(N-1) transfers
// each way, all in flight at once. Wall time is what a sweep pays for one round.
void BM_FlowButterflyRound(benchmark::State& state) {
  namespace avg = swarmlab::core::averaging;
  const auto peers = static_cast<std::uint32_t>(state.range(0));
  std::vector<LinkSpec> links;
  for (std::uint32_t i = 0; i < peers; ++i) {
    const double bps = (i % 3 == 0 ? 1e9 : 2e8) * 0.735;
    links.push_back(LinkSpec{bps, bps, 0.025});
  }
  avg::RoleAssignment roles;
  roles.weights.assign(peers, 1.0);
  roles.fractions.assign(peers, 1.0 / peers);
  const avg::RoundPlan plan = avg::make_round_plan(1, roles, 25'557'032, swarmlab::core::codec::Codec::Fp16);
  double round_s = 0;
  std::uint64_t events = 0, recomputations = 0;
  for (auto _ : state) {
    Engine engine;
    FlowNetwork net(engine, links);
    std::vector<SimPeerSpec> specs(peers, SimPeerSpec{"peer", 1.0});
    SimWorld world(engine, net, specs, 1);
    swarmlab::bench::AveragingSwarm swarm(world, peers);
    auto& services = swarm.services;
    std::uint32_t completed = 0;
    double finished = 0;
    for (PeerId i = 0; i < peers; ++i)
      services[i]->start_round(plan, {}, avg::Timeouts{}, [&](const avg::RoundOutcome& o) {
        completed += o.completed ? 1 : 0;
        finished = std::max(finished, o.finished);
      });
    engine.run();
    if (completed != peers) state.SkipWithError("round did not complete at every peer");
    round_s = finished;
    events = engine.events_processed();
    recomputations = net.recomputations();
  }
  state.counters["simulated_round_s"] = round_s;
  state.counters["events"] = static_cast<double>(events);
  state.counters["recomputations"] = static_cast<double>(recomputations);
}
BENCHMARK(BM_FlowButterflyRound)->Arg(100)->Arg(300)->Arg(1'000)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);
