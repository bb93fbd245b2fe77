#pragma once
// Random DeDLOC swarms for the planner's tests, benchmark and simulator check: datacenter GPUs,
// home GPUs behind asymmetric links, CPU-only peers (reducers), client-mode GPUs (no incoming
// connections), one to three regions with caps on every cross-region pair (uniform per ordered
// pair of regions), and now and then a peer behind a link of 100 b/s – 10 Mb/s. The batch is
// drawn so that compute and averaging both bind, from compute-bound to heavily averaging-bound.
// Deterministic: core::Rng, the same on every standard library.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/planner/planner.h"
#include "core/rng.h"

namespace swarmlab::core::planner::testing {

struct CompositionOptions {
  bool regional_caps = true;   // may draw 2–3 regions with capped cross-region pairs
  bool tiny_links = true;      // may give a few peers an upload of 100 b/s – 10 Mb/s
  bool per_pair_caps = false;  // caps vary per pair (×0.5–1.5) instead of per pair of regions
};

inline PlannerInput random_composition(int n, std::uint64_t seed, CompositionOptions opt = {}) {
  Rng rng(seed, 77);
  PlannerInput in;
  in.gradient_bits = rng.bernoulli(0.5) ? 25'557'032.0 * 16 : 1e6 + 5e8 * rng.uniform();
  const double client_p = rng.bernoulli(0.3) ? 0 : 0.25 * rng.uniform();
  const double cpu_p = rng.bernoulli(0.3) ? 0 : 0.3 * rng.uniform();
  const int regions = 1 + static_cast<int>(rng.below(3));
  const bool caps = opt.regional_caps && regions > 1 && rng.bernoulli(0.7);
  const bool tiny = opt.tiny_links && rng.bernoulli(0.2);
  double sum_sps = 0;
  std::vector<int> region(n);
  for (int i = 0; i < n; ++i) {
    PeerCapacity p;
    region[i] = static_cast<int>(rng.below(regions));
    const double kind = rng.uniform();
    if (rng.bernoulli(cpu_p)) {  // CPU-only cloud VM: reduces, never computes
      p.download_bps = p.upload_bps = (0.2 + 2.0 * rng.uniform()) * 1e9;
      if (rng.bernoulli(0.3)) p.upload_bps *= 0.2 + 0.8 * rng.uniform();
    } else if (kind < 0.3) {  // datacenter GPU
      p.compute_sps = 100 + 300 * rng.uniform();
      p.download_bps = (0.3 + 1.0 * rng.uniform()) * 1e9;
      p.upload_bps = p.download_bps * (rng.bernoulli(0.3) ? 0.3 + 0.7 * rng.uniform() : 1.0);
    } else {  // home GPU, 10–500 Mb/s down, upload 10–100% of that
      p.compute_sps = 20 + 150 * rng.uniform();
      p.download_bps = std::exp(std::log(10e6) + rng.uniform() * std::log(50.0));
      p.upload_bps = p.download_bps * (0.1 + 0.9 * rng.uniform());
    }
    if (p.compute_sps > 0 && rng.bernoulli(client_p)) p.client_mode = true;
    if (tiny && rng.bernoulli(0.05)) {
      p.upload_bps = std::exp(std::log(100.0) + rng.uniform() * std::log(1e5));
    }
    sum_sps += p.compute_sps;
    in.peers.push_back(p);
  }
  // Σ s·P/B = factor × the median computing peer's min(d, u), factor in [0.5, 15].
  std::vector<double> links;
  for (const auto& p : in.peers) {
    if (p.compute_sps > 0) links.push_back(std::min(p.download_bps, p.upload_bps));
  }
  std::sort(links.begin(), links.end());
  const double typical = links.empty() ? 1e8 : links[links.size() / 2];
  const double factor = std::exp(std::log(0.5) + rng.uniform() * std::log(30.0));
  in.target_batch = sum_sps > 0 ? sum_sps * in.gradient_bits / (typical * factor) : 1024;
  if (caps) {  // 5–200 Mb/s per ordered pair of regions
    in.pair_caps.assign(n, std::vector<double>(n, std::numeric_limits<double>::infinity()));
    std::vector<std::vector<double>> cap(regions, std::vector<double>(regions));
    for (auto& row : cap) {
      for (auto& v : row) v = std::exp(std::log(5e6) + rng.uniform() * std::log(40.0));
    }
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i == j || region[i] == region[j]) continue;
        const double noise = opt.per_pair_caps ? 0.5 + rng.uniform() : 1.0;
        in.pair_caps[i][j] = cap[region[i]][region[j]] * noise;
      }
    }
  }
  return in;
}

}  // namespace swarmlab::core::planner::testing
