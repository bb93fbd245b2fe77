// Planner solve times (docs/dedloc.md §2: the paper's solver converges in under 50 ms and runs
// about twice a minute). Heterogeneous swarms: fast and slow GPU peers (asymmetric slow links),
// CPU-only reducers and client-mode GPU peers, ResNet-50 gradient in fp16.
#include <benchmark/benchmark.h>

#include <limits>
#include <vector>

#include "core/planner/planner.h"
#include "core/rng.h"

namespace {

using swarmlab::core::Rng;
namespace planner = swarmlab::core::planner;

planner::PlannerInput heterogeneous_swarm(int n, std::uint64_t seed) {
  Rng rng(seed);
  planner::PlannerInput in;
  in.target_batch = 4096;
  in.gradient_bits = 25'557'032.0 * 16;
  for (int i = 0; i < n; ++i) {
    planner::PeerCapacity p;
    const double kind = rng.uniform();
    if (kind < 0.35) {  // datacenter GPU
      p.compute_sps = 150 + 100 * rng.uniform();
      p.download_bps = p.upload_bps = (0.5 + 0.5 * rng.uniform()) * 1e9;
    } else if (kind < 0.7) {  // home GPU, asymmetric link
      p.compute_sps = 50 + 100 * rng.uniform();
      p.download_bps = (0.05 + 0.25 * rng.uniform()) * 1e9;
      p.upload_bps = p.download_bps * (0.25 + 0.75 * rng.uniform());
    } else if (kind < 0.85) {  // CPU-only cloud VM
      p.download_bps = p.upload_bps = (0.5 + 2.0 * rng.uniform()) * 1e9;
    } else {  // GPU behind NAT
      p.compute_sps = 50 + 150 * rng.uniform();
      p.download_bps = (0.05 + 0.15 * rng.uniform()) * 1e9;
      p.upload_bps = p.download_bps * 0.5;
      p.client_mode = true;
    }
    in.peers.push_back(p);
  }
  return in;
}

// The same swarm spread over three regions, each directed cross-region pair capped at
// 30–80 Mb/s (exercises the full O(n²) roles MIP: the compact model has no pair caps).
planner::PlannerInput regional_swarm(int n, std::uint64_t seed) {
  planner::PlannerInput in = heterogeneous_swarm(n, seed);
  Rng rng(seed + 1);
  const double inf = std::numeric_limits<double>::infinity();
  in.pair_caps.assign(n, std::vector<double>(n, inf));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i % 3 != j % 3) in.pair_caps[i][j] = (0.03 + 0.05 * rng.uniform()) * 1e9;
    }
  }
  return in;
}

void run(benchmark::State& state, planner::Roles roles, bool regional = false) {
  const int n = static_cast<int>(state.range(0));
  const planner::PlannerInput in =
      regional ? regional_swarm(n, 1000 + n) : heterogeneous_swarm(n, 1000 + n);
  planner::Plan plan;
  for (auto _ : state) {
    plan = planner::solve(in, planner::PlannerOptions{roles});
    benchmark::DoNotOptimize(plan);
  }
  int computing = 0;
  for (const auto& p : plan.peers) computing += p.computes ? 1 : 0;
  state.counters["steps_per_s"] = plan.steps_per_s;
  state.counters["round_s"] = plan.round_time_s;
  state.counters["computing"] = computing;
  state.counters["exact"] = plan.roles_exact ? 1 : 0;
  state.counters["full_mip"] = plan.solver.find("full O(n^2)") != std::string::npos ? 1 : 0;
}

void BM_PlannerOptimizeRoles(benchmark::State& state) { run(state, planner::Roles::Optimize); }
void BM_PlannerFixedRoles(benchmark::State& state) {
  run(state, planner::Roles::AllComputeCapable);
}
void BM_PlannerOptimizeRolesRegionalCaps(benchmark::State& state) {
  run(state, planner::Roles::Optimize, /*regional=*/true);
}

BENCHMARK(BM_PlannerOptimizeRoles)
    ->Arg(8)
    ->Arg(16)
    ->Arg(24)
    ->Arg(32)
    ->Arg(48)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerFixedRoles)
    ->Arg(8)
    ->Arg(16)
    ->Arg(24)
    ->Arg(32)
    ->Arg(48)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerOptimizeRolesRegionalCaps)
    ->Arg(8)
    ->Arg(16)
    ->Arg(24)
    ->Arg(32)
    ->Arg(48)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);

}  // namespace
