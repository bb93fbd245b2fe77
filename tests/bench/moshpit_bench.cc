// One Moshpit averaging round over 10,000 peers holding 10^4 floats each (400 MB): a 100×100 grid,
// so a round is 100 groups of 100, every peer alive. Bytes processed = the values read once.
#include <numeric>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/moshpit/grid.h"
#include "core/rng.h"
#include "sim/experiments/moshpit_experiment.h"

namespace {

void BM_MoshpitRound(benchmark::State& state) {
  const std::size_t peers = 10'000, dim = 10'000;
  const swarmlab::core::moshpit::Grid grid(peers, 100);
  std::vector<float> values(peers * dim);
  swarmlab::core::Rng rng(1);
  for (float& v : values) v = static_cast<float>(rng.uniform());
  std::vector<std::uint8_t> alive(peers, 1);
  std::vector<float> scratch(dim);
  std::uint64_t round = 0;
  for (auto _ : state) {
    swarmlab::sim::average_groups<float>(values, dim, grid.groups_in_round(round++), alive, scratch);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * values.size() * sizeof(float)));
}
BENCHMARK(BM_MoshpitRound)->Unit(benchmark::kMillisecond)->Iterations(4);

}  // namespace
