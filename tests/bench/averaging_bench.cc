// BM_Reduce*: the reduction arithmetic of a butterfly reducer on one 512 KiB fp16 part (256 Ki
// floats), as a plain loop (what butterfly_round.cc does) and as an Eigen expression; both compute
// the same bits (no FMA either way). Argument: 0 loop, 1 Eigen.
//
// BM_ReduceCenteredClip: the same part's 15 contributions aggregated with CenteredClip
// (core/averaging/centered_clip.h, docs/trust.md §3) instead; argument: iterations (1, 5, 20).
// Compare with BM_ReduceAccumulate + BM_ReduceFinalize, the weighted mean.
//
// BM_ButterflyRoundCarried: wall time of one butterfly round that carries real vectors: 16 peers, 4 Mi floats each (16 MiB),
// on the flow model. What it costs besides the simulated network: encoding every part, decoding
// and accumulating the contributions (the reduction in core/averaging/butterfly_round.cc),
// finalising the averages, decoding them back. Argument: the codec (0 fp32, 1 fp16,
// 2 fp16-scaled, 3 uint8).
#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "core/averaging/centered_clip.h"
#include "core/averaging/role_assignment.h"
#include "core/averaging/round_plan.h"
#include "core/rng.h"
#include "sim/binding/sim_world.h"
#include "sim/network/flow_network.h"
#include "averaging_swarm.h"

namespace {

using namespace swarmlab::sim;
namespace avg = swarmlab::core::averaging;

constexpr std::size_t kPart = 256u << 10;
constexpr int kContributions = 15;

struct ReduceData {
  std::vector<std::vector<float>> x = std::vector<std::vector<float>>(kContributions, std::vector<float>(kPart));
  std::vector<float> weights;
  ReduceData() {
    swarmlab::core::Rng rng(5);
    for (auto& v : x)
      for (float& f : v) f = static_cast<float>(rng.normal());
    for (int c = 0; c < kContributions; ++c) weights.push_back(1.0f + static_cast<float>(c % 4));
  }
};
const ReduceData& reduce_data() {
  static const ReduceData d;
  return d;
}

// sums = w0·x0, then sums += w·x for each other contribution.
void BM_ReduceAccumulate(benchmark::State& state) {
  const auto& d = reduce_data();
  std::vector<float> sums(kPart);
  for (auto _ : state) {
    if (state.range(0) == 0) {
      for (std::size_t i = 0; i < kPart; ++i) sums[i] = d.weights[0] * d.x[0][i];
      for (int c = 1; c < kContributions; ++c) {
        const float w = d.weights[c];
        const float* x = d.x[c].data();
        float* sum = sums.data();
        for (std::size_t i = 0; i < kPart; ++i) sum[i] += w * x[i];
      }
    } else {
      Eigen::Map<Eigen::ArrayXf> sum(sums.data(), kPart);
      sum = d.weights[0] * Eigen::Map<const Eigen::ArrayXf>(d.x[0].data(), kPart);
      for (int c = 1; c < kContributions; ++c) sum += d.weights[c] * Eigen::Map<const Eigen::ArrayXf>(d.x[c].data(), kPart);
    }
    benchmark::DoNotOptimize(sums.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kContributions * kPart * sizeof(float)));
  state.SetLabel(state.range(0) == 0 ? "loop" : "Eigen");
}
BENCHMARK(BM_ReduceAccumulate)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// average = float(sum · (1 / total weight)), in double.
void BM_ReduceFinalize(benchmark::State& state) {
  const auto& sums = reduce_data().x[0];
  std::vector<float> average(kPart);
  const double inv = 1.0 / 37.0;
  for (auto _ : state) {
    if (state.range(0) == 0) {
      for (std::size_t i = 0; i < kPart; ++i) average[i] = static_cast<float>(sums[i] * inv);
    } else {
      Eigen::Map<Eigen::ArrayXf>(average.data(), kPart) =
          (Eigen::Map<const Eigen::ArrayXf>(sums.data(), kPart).cast<double>() * inv).cast<float>();
    }
    benchmark::DoNotOptimize(average.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kPart * sizeof(float)));
  state.SetLabel(state.range(0) == 0 ? "loop" : "Eigen");
}
BENCHMARK(BM_ReduceFinalize)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_ReduceCenteredClip(benchmark::State& state) {
  const auto& d = reduce_data();
  std::vector<float> rows;
  for (const auto& x : d.x) rows.insert(rows.end(), x.begin(), x.end());
  const std::vector<double> weights(d.weights.begin(), d.weights.end());
  std::vector<float> out(kPart);
  const avg::CenteredClip clip{1.0, static_cast<std::uint32_t>(state.range(0))};
  for (auto _ : state) {
    benchmark::DoNotOptimize(avg::centered_clip(rows, weights, clip, out));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kContributions * kPart * sizeof(float)));
}
BENCHMARK(BM_ReduceCenteredClip)->Arg(1)->Arg(5)->Arg(20)->Unit(benchmark::kMillisecond);

void BM_ButterflyRoundCarried(benchmark::State& state) {
  constexpr std::uint32_t kPeers = 16;
  constexpr std::size_t kLength = 4u << 20;
  const auto codec = static_cast<swarmlab::core::codec::Codec>(state.range(0));
  avg::RoleAssignment roles;
  roles.weights.assign(kPeers, 1.0);
  for (std::uint32_t i = 0; i < kPeers; ++i) roles.weights[i] = 1.0 + i % 3;  // unequal weights
  roles.fractions.assign(kPeers, 1.0 / kPeers);
  const avg::RoundPlan plan = avg::make_round_plan(1, roles, kLength, codec);
  std::vector<std::vector<float>> initial(kPeers, std::vector<float>(kLength));
  swarmlab::core::Rng rng(3);
  for (auto& v : initial)
    for (float& x : v) x = static_cast<float>(rng.normal());
  std::vector<std::vector<float>> values;
  for (auto _ : state) {
    state.PauseTiming();
    values = initial;
    state.ResumeTiming();
    Engine engine;
    FlowNetwork net(engine, std::vector<LinkSpec>(kPeers, LinkSpec{1e10, 1e10, 0.001}));
    SimWorld world(engine, net, std::vector<SimPeerSpec>(kPeers, SimPeerSpec{"peer", 1.0}), 1);
    swarmlab::bench::AveragingSwarm swarm(world, kPeers);
    auto& services = swarm.services;
    std::uint32_t completed = 0;
    for (PeerId i = 0; i < kPeers; ++i)
      services[i]->start_round(plan, values[i], avg::Timeouts{},
                               [&](const avg::RoundOutcome& o) { completed += o.completed ? 1 : 0; });
    engine.run();
    if (completed != kPeers) state.SkipWithError("round did not complete at every peer");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kPeers * kLength * sizeof(float)));
  state.SetLabel(std::string(swarmlab::core::codec::name(codec)));
}
BENCHMARK(BM_ButterflyRoundCarried)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
