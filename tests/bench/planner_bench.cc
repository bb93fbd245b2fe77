// Planner solve times (docs/dedloc.md §2: DeDLOC re-solves about twice a minute, so a solve must
// take well under a second). Random compositions (tests/core/planner/random_compositions.h):
// datacenter and home GPUs with asymmetric links, CPU-only reducers, client-mode GPUs, regional
// pair caps, the odd peer behind a tiny link; ResNet-50-sized or random gradients.
//
// BM_PlannerCompositions/n solves 30 compositions of n peers once each (one iteration) and reports
// the median and maximum CPU time of a solve, how many were proven optimal, the largest proven
// gap, and how many met the targets (optimal or gap < 1% within 5 ms at 24 peers, 100 ms
// at 48, 1 s at 128); the HeldOut variants do the same on 60 other compositions.
// BM_PlannerWarmStart/n compares a cold solve with a warm one (a Planner that keeps the previous
// plan's roles and LP bases) after one peer leaves or joins. CPU time is measured here, never in
// the core.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <vector>

#include "../core/planner/random_compositions.h"
#include "core/planner/planner.h"

namespace {

namespace planner = swarmlab::core::planner;

constexpr int kCompositions = 30;

double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double target_ms(int n) { return n <= 24 ? 5 : n <= 48 ? 100 : 1000; }

void report_times(benchmark::State& state, const std::vector<double>& ms, int exact,
                  double worst_gap, int n) {
  int on_target = 0;
  for (double t : ms) on_target += t <= target_ms(n) ? 1 : 0;
  state.counters["median_ms"] = median(ms);
  state.counters["max_ms"] = *std::max_element(ms.begin(), ms.end());
  state.counters["exact"] = exact;
  state.counters["max_gap_pct"] = 100 * worst_gap;
  state.counters["within_target"] = on_target;
  state.counters["count"] = static_cast<double>(ms.size());
}

void run_compositions(benchmark::State& state, planner::PlannerOptions options,
                      planner::testing::CompositionOptions composition = {},
                      int first_seed = 100, int count = kCompositions) {
  const int n = static_cast<int>(state.range(0));
  std::vector<planner::PlannerInput> inputs;
  for (int s = 0; s < count; ++s) {
    inputs.push_back(planner::testing::random_composition(n, 1000 * n + first_seed + s, composition));
  }
  std::vector<double> ms;
  int exact = 0;
  double worst_gap = 0;
  for (auto _ : state) {
    ms.clear();
    exact = 0;
    worst_gap = 0;
    for (const auto& in : inputs) {
      const double t0 = cpu_ms();
      const planner::Plan plan = planner::solve(in, options);
      ms.push_back(cpu_ms() - t0);
      exact += plan.roles_exact ? 1 : 0;
      worst_gap = std::max(worst_gap, plan.roles_gap);
      benchmark::DoNotOptimize(plan);
    }
  }
  report_times(state, ms, exact, worst_gap, n);
}

// Roles optimised, proving optimality (or the gap the budget allows).
void BM_PlannerCompositions(benchmark::State& state) { run_compositions(state, {}); }
// Roles optimised, stopping once no roles can beat the plan by more than 1%.
void BM_PlannerCompositionsGap1pct(benchmark::State& state) {
  planner::PlannerOptions options;
  options.max_gap = 0.01;
  run_compositions(state, options);
}
// 60 other compositions from the same generator (seeds 1000·n + 300…359), never used to tune
// the search: the 30 above turned out to be a favourable sample (README.md, "Performance").
void BM_PlannerCompositionsHeldOut(benchmark::State& state) {
  run_compositions(state, {}, {}, 300, 60);
}
void BM_PlannerCompositionsHeldOutGap1pct(benchmark::State& state) {
  planner::PlannerOptions options;
  options.max_gap = 0.01;
  run_compositions(state, options, {}, 300, 60);
}
// The same compositions without pair caps.
void BM_PlannerCompositionsNoCaps(benchmark::State& state) {
  planner::testing::CompositionOptions composition;
  composition.regional_caps = false;
  run_compositions(state, {}, composition);
}
// Every compute-capable peer computes: the averaging LP and the split alone.
void BM_PlannerFixedRoles(benchmark::State& state) {
  run_compositions(state, planner::PlannerOptions{planner::Roles::AllComputeCapable});
}

// The averaging LP (and the split) alone at the roles a full solve picks, on the held-out
// compositions with pair caps: with caps its exact form needs σ per capped pair and transport
// cuts, and it is what most of the 24-peer misses spend their time on (README.md,
// "Performance"). The roles are fixed by giving the other peers no compute: they still reduce.
void BM_PlannerCappedLpAtChosenRoles(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<planner::PlannerInput> inputs;
  for (int s = 0; s < 60; ++s) {
    planner::PlannerInput in = planner::testing::random_composition(n, 1000 * n + 300 + s);
    if (in.pair_caps.empty()) continue;
    const planner::Plan plan = planner::solve(in);
    int computing = 0;
    for (int i = 0; i < n; ++i) {
      if (!plan.peers[i].computes) in.peers[i].compute_sps = 0;
      computing += plan.peers[i].computes ? 1 : 0;
    }
    if (computing >= 2) inputs.push_back(std::move(in));
  }
  std::vector<double> ms;
  for (auto _ : state) {
    ms.clear();
    for (const auto& in : inputs) {
      const double t0 = cpu_ms();
      benchmark::DoNotOptimize(planner::solve(in, {planner::Roles::AllComputeCapable}));
      ms.push_back(cpu_ms() - t0);
    }
  }
  double total = 0;
  for (double t : ms) total += t;
  state.counters["median_ms"] = median(ms);
  state.counters["max_ms"] = *std::max_element(ms.begin(), ms.end());
  state.counters["total_ms"] = total;
  state.counters["count"] = static_cast<double>(ms.size());
}

// n identical peers, every compute-capable one computing (the plain-LP path; degenerate for
// simplex codes).
void BM_PlannerHomogeneous(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  planner::PlannerInput in;
  in.peers.assign(n, planner::PeerCapacity{100, 1e9, 1e9, false});
  in.target_batch = 4096;
  in.gradient_bits = 25'557'032.0 * 16;
  for (auto _ : state) {
    benchmark::DoNotOptimize(planner::solve(in, {planner::Roles::AllComputeCapable}));
  }
}

// A swarm of n peers after one peer left (even compositions) or joined (odd ones): a cold solve
// against a warm one from the previous plan's roles (planner::Planner, peers keyed by id).
void BM_PlannerWarmStart(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::vector<double> cold, warm, speedup;
  int same = 0;
  for (auto _ : state) {
    cold.clear();
    warm.clear();
    speedup.clear();
    same = 0;
    for (int s = 0; s < kCompositions; ++s) {
      const planner::PlannerInput all =
          planner::testing::random_composition(n + 1, 777000 + s);  // n + 1 peers
      const int k = s % (n + 1);  // the peer that comes or goes
      planner::PlannerInput without = all;
      without.peers.erase(without.peers.begin() + k);
      if (!without.pair_caps.empty()) {
        without.pair_caps.erase(without.pair_caps.begin() + k);
        for (auto& row : without.pair_caps) row.erase(row.begin() + k);
      }
      std::vector<std::uint64_t> keys_all, keys_without;
      for (int i = 0; i <= n; ++i) {
        keys_all.push_back(static_cast<std::uint64_t>(i));
        if (i != k) keys_without.push_back(static_cast<std::uint64_t>(i));
      }
      const bool leaves = s % 2 == 0;
      planner::Planner session;
      session.solve(leaves ? all : without, leaves ? keys_all : keys_without);
      const planner::PlannerInput& next = leaves ? without : all;
      const auto& next_keys = leaves ? keys_without : keys_all;
      double t0 = cpu_ms();
      const planner::Plan fresh = planner::solve(next);
      const double cold_ms = cpu_ms() - t0;
      t0 = cpu_ms();
      const planner::Plan again = session.solve(next, next_keys);
      const double warm_ms = cpu_ms() - t0;
      cold.push_back(cold_ms);
      warm.push_back(warm_ms);
      speedup.push_back(cold_ms / warm_ms);
      // The same value (to the search's 1e-6); the roles may differ where several are as good.
      same += std::abs(fresh.steps_per_s - again.steps_per_s) <= 1e-6 * fresh.steps_per_s ? 1 : 0;
    }
  }
  state.counters["cold_median_ms"] = median(cold);
  state.counters["warm_median_ms"] = median(warm);
  state.counters["speedup_median"] = median(speedup);
  state.counters["speedup_min"] = *std::min_element(speedup.begin(), speedup.end());
  state.counters["cold_max_ms"] = *std::max_element(cold.begin(), cold.end());
  state.counters["warm_max_ms"] = *std::max_element(warm.begin(), warm.end());
  state.counters["same_value"] = same;
}

BENCHMARK(BM_PlannerCompositions)
    ->Arg(8)
    ->Arg(16)
    ->Arg(24)
    ->Arg(32)
    ->Arg(48)
    ->Arg(64)
    ->Arg(96)
    ->Arg(128)
    ->Arg(192)
    ->Arg(256)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerCompositionsGap1pct)
    ->Arg(24)
    ->Arg(48)
    ->Arg(128)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerCompositionsHeldOut)
    ->Arg(24)
    ->Arg(48)
    ->Arg(128)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerCompositionsHeldOutGap1pct)
    ->Arg(24)
    ->Arg(48)
    ->Arg(128)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerCompositionsNoCaps)
    ->Arg(24)
    ->Arg(48)
    ->Arg(128)
    ->Arg(256)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerCappedLpAtChosenRoles)
    ->Arg(24)
    ->Arg(48)
    ->Arg(128)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerFixedRoles)
    ->Arg(24)
    ->Arg(48)
    ->Arg(128)
    ->Arg(256)
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerHomogeneous)->Arg(48)->Arg(128)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlannerWarmStart)->Arg(64)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
