// Tests of the DeDLOC planner (docs/dedloc.md §2): the paper's special cases, closed forms derived
// by hand, brute-force and reference checks of the roles search and of the averaging LP, the split
// against every capacity, gaps and budgets, warm starts, determinism and validation.
#include "core/planner/planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/planner/glpk_model.h"
#include "core/planner/lp_model.h"
#include "core/rng.h"
#include "random_compositions.h"

namespace swarmlab::core::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGbps = 1e9;

PeerCapacity peer(double sps, double down, double up, bool client = false) {
  return PeerCapacity{sps, down, up, client};
}
PeerCapacity gpu(double sps, double bps, bool client = false) {
  return peer(sps, bps, bps, client);
}
PeerCapacity cpu(double bps) { return peer(0, bps, bps); }

PlannerInput make_input(std::vector<PeerCapacity> peers, double batch = 4096, double bits = 1e9) {
  PlannerInput in;
  in.peers = std::move(peers);
  in.target_batch = batch;
  in.gradient_bits = bits;
  return in;
}

const PlannerOptions kFixedAveraging{Roles::AllComputeCapable, Objective::AveragingOnly};

double fraction_sum(const Plan& plan) {
  double s = 0;
  for (const auto& p : plan.peers) s += p.fraction;
  return s;
}

// Every peer's bandwidth use and every structural rule of the model, checked on the output.
void expect_feasible(const PlannerInput& in, const Plan& plan) {
  const std::size_t n = in.peers.size();
  ASSERT_EQ(plan.peers.size(), n);
  ASSERT_EQ(plan.send_rate.size(), n);
  ASSERT_EQ(plan.return_rate.size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    double down = 0, up = 0;
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      down += plan.send_rate[j][i] + plan.return_rate[j][i];
      up += plan.send_rate[i][j] + plan.return_rate[i][j];
      if (!in.pair_caps.empty() && std::isfinite(in.pair_caps[i][j])) {
        EXPECT_LE(plan.send_rate[i][j] + plan.return_rate[i][j],
                  in.pair_caps[i][j] * (1 + 1e-6) + 1e-3);
      }
    }
    EXPECT_LE(down, in.peers[i].download_bps * (1 + 1e-6) + 1e-3) << "peer " << i;
    EXPECT_LE(up, in.peers[i].upload_bps * (1 + 1e-6) + 1e-3) << "peer " << i;
    if (!plan.peers[i].computes) {
      for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(plan.send_rate[i][j], 0) << i << "->" << j;
    }
    if (in.peers[i].compute_sps == 0) {
      EXPECT_FALSE(plan.peers[i].computes) << "peer " << i;
    }
    if (in.peers[i].client_mode) {
      EXPECT_EQ(plan.aggregation_rate[i], 0);
      for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(plan.return_rate[i][j], 0);
    }
    EXPECT_GE(plan.peers[i].fraction, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// The paper's special cases.

// n identical peers, every link b. Averaging rate (ρ = Σ_j g_ji) by hand: with equal aggregation
// rates z, peer i downloads (n−1)z of others' parts of its span plus (n−1)z of averaged spans from
// the other reducers, and gets its own span locally (g_ii = z): ρ = n·z with 2(n−1)z <= b, so
// ρ = n·b / (2(n−1)) and the round takes 2(n−1)/n · P/b — exactly the ideal butterfly all-reduce.
// The LP cannot do better: summing the downloads, A (parts) + G (averaged spans) <= n·b, G <= A and
// Σ_i g_ii <= A/(n−1), so n·ρ <= A/(n−1) + G <= n·b/2 · n/(n−1). For n >= 3 the optimum forces
// every z_i equal ((n−2)z_i + Σ_j z_j = b for all i), hence equal fractions.
TEST(PlannerSpecialCases, HomogeneousPeersGetEqualFractionsLikeButterflyAllReduce) {
  for (int n : {3, 4, 8}) {
    std::vector<PeerCapacity> peers(n, gpu(100, kGbps));
    const PlannerInput in = make_input(peers, 4096, 1e9);
    for (const PlannerOptions& opt : {PlannerOptions{}, kFixedAveraging}) {
      const Plan plan = solve(in, opt);
      expect_feasible(in, plan);
      const double butterfly = 2.0 * (n - 1) / n * in.gradient_bits / kGbps;
      EXPECT_NEAR(plan.round_time_s, butterfly, 1e-6 * butterfly) << "n=" << n;
      for (const auto& p : plan.peers) {
        EXPECT_TRUE(p.computes);
        EXPECT_NEAR(p.fraction, 1.0 / n, 1e-6) << "n=" << n;
      }
      EXPECT_NEAR(fraction_sum(plan), 1.0, 1e-12);
    }
    // Compute is the binding term here (n·100/4096 steps/s < the averaging rate), so all compute.
    const Plan plan = solve(in);
    EXPECT_NEAR(plan.steps_per_s, n * 100.0 / 4096, 1e-9);
    EXPECT_TRUE(plan.roles_exact);
  }
}

// Workers at b plus one peer at 20·b without (or with little) compute. A worker aggregating z of
// its own span pays (n−1)·z of download for the others' parts and gains only z locally, while the
// server's share costs it nothing beyond the averaged span itself; with n >= 3 workers the LP puts
// everything on the server: ρ = b (each worker uploads P and downloads P per round), round P/b,
// better than the butterfly's 2(n−1)/n·P/b.
TEST(PlannerSpecialCases, HighBandwidthPeerBecomesParameterServer) {
  const int n = 6;
  for (double server_sps : {0.0, 1.0}) {
    std::vector<PeerCapacity> peers(n, gpu(100, kGbps));
    peers.push_back(gpu(server_sps, 20 * kGbps));
    const PlannerInput in = make_input(peers);
    const Plan plan = solve(in, PlannerOptions{});
    expect_feasible(in, plan);
    EXPECT_GE(plan.peers[n].fraction, 0.99) << "server compute " << server_sps;
    EXPECT_NEAR(plan.round_time_s, in.gradient_bits / kGbps, 1e-6);
    EXPECT_LT(plan.round_time_s, 2.0 * (n - 1) / n * in.gradient_bits / kGbps);
  }
}

// 4 GPU + 2 CPU-only peers, all at b. By symmetry take z_g per GPU reducer, z_c per CPU reducer.
// GPU download: 3·z_g (parts from the other GPUs) + 3·z_g (averaged GPU spans) + 2·z_c (CPU spans)
// <= b; CPU download: 4·z_c <= b (upload the same). ρ = 4·z_g + 2·z_c, increasing in z_c, so
// z_c = b/4, z_g = b/12, ρ = 5b/6: round 1.2·P/b against 1.5·P/b without the CPUs; fractions
// CPU 0.3, GPU 0.1. The CPU peers reduce but never compute or send.
TEST(PlannerSpecialCases, CpuOnlyPeersBecomeExtraReducers) {
  std::vector<PeerCapacity> peers(4, gpu(100, kGbps));
  peers.push_back(cpu(kGbps));
  peers.push_back(cpu(kGbps));
  const PlannerInput in = make_input(peers);
  for (const PlannerOptions& opt : {PlannerOptions{}, kFixedAveraging}) {
    const Plan plan = solve(in, opt);
    expect_feasible(in, plan);
    EXPECT_NEAR(plan.round_time_s, 1.2 * in.gradient_bits / kGbps, 1e-6);
    for (int i = 0; i < 4; ++i) {
      EXPECT_TRUE(plan.peers[i].computes);
      EXPECT_NEAR(plan.peers[i].fraction, 0.1, 1e-6);
    }
    for (int i = 4; i < 6; ++i) {
      EXPECT_FALSE(plan.peers[i].computes);
      EXPECT_NEAR(plan.peers[i].fraction, 0.3, 1e-6);
      for (int j = 0; j < 6; ++j) EXPECT_EQ(plan.send_rate[i][j], 0);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Optimality against closed forms (each derived in the comment; all within 1% of steps_per_s,
// most far tighter).

// Two peers with links (d1,u1), (d2,u2): every span of peer 1 costs peer 1 one unit of download
// (peer 2's part) and peer 2 one unit (the average), and the other way round, so ρ = z_1 + z_2
// with z_1 + z_2 <= each of d1, u1, d2, u2. Round P / min(d1,u1,d2,u2); any split of the spans
// is optimal (the special n = 2 case of the butterfly).
TEST(PlannerOptimality, TwoPeers) {
  const PlannerInput in =
      make_input({peer(100, 2 * kGbps, 0.5 * kGbps), peer(100, 0.8 * kGbps, 3 * kGbps)});
  const Plan plan = solve(in, kFixedAveraging);
  expect_feasible(in, plan);
  EXPECT_NEAR(plan.round_time_s, in.gradient_bits / (0.5 * kGbps), 1e-6);
  EXPECT_NEAR(fraction_sum(plan), 1.0, 1e-12);
}

// Butterfly exactness for n = 2..10 (see the HomogeneousPeers test for the derivation).
TEST(PlannerOptimality, HomogeneousButterflyRoundTime) {
  for (int n = 2; n <= 10; ++n) {
    const PlannerInput in = make_input(std::vector<PeerCapacity>(n, gpu(50, 0.3 * kGbps)));
    const Plan plan = solve(in, kFixedAveraging);
    const double expected = 2.0 * (n - 1) / n * in.gradient_bits / (0.3 * kGbps);
    EXPECT_NEAR(plan.round_time_s, expected, 1e-7 * expected) << "n=" << n;
  }
}

// Asymmetric links: 4 workers with upload u and download 4u (ADSL-like) plus a CPU-only reducer
// with 2u each way. Per worker, upload = 3·z_w (parts to the other workers) + z_s (part to the
// server) + 3·z_w (own span back to the others) <= u; its download is the same expression and
// 4u leaves it slack. Server: 4·z_s <= 2u. ρ = 4·z_w + z_s with z_w = (u − z_s)/6, so
// ρ = 2u/3 + z_s/3, maximal at z_s = u/2: ρ = 5u/6 = 0.8333u. The mirror image (download u,
// upload 4u) gives the same.
TEST(PlannerOptimality, AsymmetricLinks) {
  const double u = 0.1 * kGbps;
  for (bool upload_limited : {true, false}) {
    std::vector<PeerCapacity> peers;
    for (int i = 0; i < 4; ++i) {
      peers.push_back(upload_limited ? peer(10, 4 * u, u) : peer(10, u, 4 * u));
    }
    peers.push_back(cpu(2 * u));
    const PlannerInput in = make_input(peers, 4096, 1e8);
    const Plan plan = solve(in, PlannerOptions{});
    expect_feasible(in, plan);
    const double rho = 5.0 / 6.0 * u;
    EXPECT_NEAR(plan.averaging_rate, rho / in.gradient_bits, 1e-6 * rho / in.gradient_bits);
    // Compute: 40 samples/s / 4096 ≈ 0.0098 steps/s < 0.83 averaging rounds/s, so ξ = Σs/B.
    EXPECT_NEAR(plan.steps_per_s, 40.0 / 4096, 1e-12);
    EXPECT_NEAR(plan.peers[4].fraction, 0.6, 1e-6);  // (u/2) / (5u/6)
  }
}

// Pairwise caps: regions {0,1} and {2,3}, all links b, each cross-region directed pair capped at
// t. By symmetry all z are equal; a cross pair carries a_ij + g_ij with a_ij >= z, so the
// averaged span returned across regions is g_c <= t − z. Receiver: ρ = 2z + 2·g_c; download
// 3z + z + 2·g_c <= b. With s = z + g_c: ρ = 2s, s <= t and 2s + 2z <= b with z >= s/2, so
// ρ = 2·min(t, b/3). t = 0.1b → ρ = 0.2b; t = b → butterfly 2b/3.
TEST(PlannerOptimality, PairwiseCaps) {
  const double b = kGbps;
  for (double t : {0.1 * b, 0.25 * b, b}) {
    PlannerInput in = make_input(std::vector<PeerCapacity>(4, gpu(100, b)));
    in.pair_caps.assign(4, std::vector<double>(4, kInf));
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        if (i / 2 != j / 2) in.pair_caps[i][j] = t;
      }
    }
    const Plan plan = solve(in, kFixedAveraging);
    expect_feasible(in, plan);
    const double rho = 2 * std::min(t, b / 3);
    EXPECT_NEAR(plan.averaging_rate, rho / in.gradient_bits, 1e-6 * rho / in.gradient_bits) << t;
  }
}

// 3 normal peers + 1 client-mode peer, all at b. Normal reducers at z: a normal peer downloads
// 3z of parts (two normal senders + the client) and 2z of averaged spans, and gets its own span
// locally: ρ = z + 2z = 3z, 5z <= b. The client downloads 3z <= b and uploads 3z <= b.
// So ρ = 3b/5 (0.6b, against 2b/3 if the fourth peer could reduce); client fraction 0.
TEST(PlannerOptimality, ClientModePeer) {
  std::vector<PeerCapacity> peers(3, gpu(100, kGbps));
  peers.push_back(gpu(100, kGbps, /*client=*/true));
  const PlannerInput in = make_input(peers);
  const Plan plan = solve(in, kFixedAveraging);
  expect_feasible(in, plan);
  EXPECT_NEAR(plan.averaging_rate, 0.6 * kGbps / in.gradient_bits, 1e-6);
  EXPECT_EQ(plan.peers[3].fraction, 0);
  EXPECT_TRUE(plan.peers[3].computes);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(plan.peers[i].fraction, 1.0 / 3, 1e-6);
}

// Plenty of bandwidth: the compute term binds and ξ = Σ s_i / B with every GPU computing; the
// CPU-only peer adds no samples.
TEST(PlannerOptimality, ComputeBound) {
  const PlannerInput in = make_input(
      {gpu(120, 10 * kGbps), gpu(80, 10 * kGbps), gpu(35, 5 * kGbps), cpu(10 * kGbps)}, 1024, 1e8);
  const Plan plan = solve(in);
  EXPECT_NEAR(plan.steps_per_s, 235.0 / 1024, 1e-12);
  EXPECT_TRUE(plan.peers[0].computes && plan.peers[1].computes && plan.peers[2].computes);
  EXPECT_FALSE(plan.peers[3].computes);
  EXPECT_GT(plan.averaging_rate, plan.steps_per_s);
  EXPECT_TRUE(plan.roles_exact);
}

// A GPU peer behind a very slow client-mode link: if it computed it would have to receive the
// average at >= ξ·P through 1 Mb/s, so ξ <= 1e6/P = 0.001 steps/s. Each peer's compute alone is
// worth κ = s·P/B = 0.2b of averaging rate; the other three at b average at 3b/4 (butterfly)
// > 3κ = 0.6b, so without the slow peer ξ = 3s/B (compute-bound), far better. The roles search
// must leave it idle.
TEST(PlannerOptimality, MipDropsAPeerWhoseLinkWouldStallEveryone) {
  const double P = 1e9;
  const double s = 0.2 * kGbps * 4096 / P;  // κ = 0.2b
  std::vector<PeerCapacity> peers(3, gpu(s, kGbps));
  peers.push_back(gpu(s, 1e6, /*client=*/true));
  const PlannerInput in = make_input(peers, 4096, P);
  const Plan plan = solve(in);
  expect_feasible(in, plan);
  EXPECT_NEAR(plan.steps_per_s, 3 * s / 4096, 1e-9);
  EXPECT_FALSE(plan.peers[3].computes);
  EXPECT_TRUE(plan.roles_exact);
  EXPECT_NE(plan.solver.find("branch-and-cut"), std::string::npos) << plan.solver;
}

// A peer behind a 1 Mb/s link makes "every capable peer computes" hopeless: the nested sets'
// incumbent must dismiss that set with the bounds that need no LP, so the only averaging LP solved
// is the chosen roles' own (for the rate the plan reports). Tested first, against no incumbent, it
// used to cost an LP of its own, the largest of the search (README.md, "The roles search").
TEST(PlannerRolesSearch, EveryPeerComputingIsDismissedWithoutItsLp) {
  std::vector<PeerCapacity> peers;
  for (int i = 0; i < 8; ++i) {
    peers.push_back(peer(100 + 10 * i, (1 + 0.1 * i) * kGbps, 0.5 * kGbps));
  }
  peers.push_back(gpu(150, 1e6));
  const PlannerInput in = make_input(peers);
  const Plan plan = solve(in);
  expect_feasible(in, plan);
  EXPECT_TRUE(plan.roles_exact);
  EXPECT_FALSE(plan.peers[8].computes);
  EXPECT_NE(plan.solver.find("(1 averaging LPs)"), std::string::npos) << plan.solver;
}

// ---------------------------------------------------------------------------------------------
// Brute force: for small random swarms, the roles search's ξ equals the best ξ over every role
// assignment c ∈ {0,1}^n, each evaluated on the per-pair reference LP (independent of the
// aggregated averaging LP the planner uses), or in closed form for one computing peer.

double best_over_all_roles(const PlannerInput& in) {
  const int n = static_cast<int>(in.peers.size());
  const detail::ScaledProblem p = detail::scale(in, PlannerOptions{});
  double best = 0;
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<bool> roles(n, false);
    bool valid = true;
    double compute = 0;
    for (int i = 0; i < n; ++i) {
      roles[i] = (mask >> i) & 1u;
      if (roles[i] && in.peers[i].compute_sps == 0) valid = false;
      if (roles[i]) compute += in.peers[i].compute_sps / in.target_batch;
    }
    if (!valid) continue;
    double rate = kInf;
    if (std::count(roles.begin(), roles.end(), true) >= 2) {
      rate = detail::reference_averaging_lp(p, roles).rho * p.unit_bps / in.gradient_bits;
    }
    best = std::max(best, std::min(compute, rate));
  }
  return best;
}

PlannerInput random_swarm(Rng& rng, int n, bool caps) {
  std::vector<PeerCapacity> peers;
  for (int i = 0; i < n; ++i) {
    const double kind = rng.uniform();
    const double sps = kind < 0.2 ? 0 : 20 + 200 * rng.uniform();
    const double down = (0.05 + rng.uniform()) * kGbps;
    const double up = (0.05 + rng.uniform()) * kGbps;
    peers.push_back(peer(sps, down, up, rng.bernoulli(0.25)));
  }
  PlannerInput in = make_input(peers, 256, 4e8);  // κ_i ≈ 0.03–0.3 Gb/s: both regimes
  if (caps) {
    in.pair_caps.assign(n, std::vector<double>(n, kInf));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != j && rng.bernoulli(0.3)) in.pair_caps[i][j] = (0.02 + 0.3 * rng.uniform()) * kGbps;
      }
    }
  }
  return in;
}

// Capacities spread over orders of magnitude, often very asymmetric (upload-poor reducers make
// the compact model inexact, so the full MIP has to run above its incumbent).
PlannerInput extreme_swarm(Rng& rng, int n) {
  std::vector<PeerCapacity> peers;
  for (int i = 0; i < n; ++i) {
    const double base = std::exp(1.5 * rng.normal());
    const double sps = rng.bernoulli(0.25) ? 0 : 10 + 300 * rng.uniform();
    peers.push_back(peer(sps, base * std::exp(rng.normal()) * 0.3 * kGbps,
                         base * std::exp(rng.normal()) * 0.3 * kGbps, rng.bernoulli(0.25)));
  }
  return make_input(peers, 256, 4e8);
}

TEST(PlannerBruteForce, MipMatchesEnumerationOfRoles) {
  Rng rng(2021);
  int bandwidth_bound = 0, idle_gpus = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 3 + trial % 3;  // 3..5 peers
    const PlannerInput in = random_swarm(rng, n, trial % 2 == 1);
    const Plan plan = solve(in);
    expect_feasible(in, plan);
    const double best = best_over_all_roles(in);
    EXPECT_NEAR(plan.steps_per_s, best, 1e-7 * best) << "trial " << trial;
    EXPECT_TRUE(plan.roles_exact);
    double compute = 0;
    for (int i = 0; i < n; ++i) compute += plan.peers[i].computes ? in.peers[i].compute_sps : 0;
    if (plan.steps_per_s < compute / in.target_batch * (1 - 1e-9)) ++bandwidth_bound;
    for (int i = 0; i < n; ++i) {
      if (in.peers[i].compute_sps > 0 && !plan.peers[i].computes) {
        ++idle_gpus;
        break;
      }
    }
  }
  std::printf("bandwidth-bound trials: %d, trials leaving a GPU idle: %d\n", bandwidth_bound,
              idle_gpus);
  // The draw must exercise the averaging-bound regime, where roles are a real trade-off.
  EXPECT_GE(bandwidth_bound, 10);
  EXPECT_GE(idle_gpus, 3);
}

TEST(PlannerBruteForce, MipMatchesEnumerationOfRolesOnExtremeSwarms) {
  Rng rng(99);
  int searched = 0, selective = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const PlannerInput in = extreme_swarm(rng, 3 + trial % 4);  // 3..6 peers
    const Plan plan = solve(in);
    expect_feasible(in, plan);
    const double best = best_over_all_roles(in);
    EXPECT_NEAR(plan.steps_per_s, best, 1e-6 * best) << "trial " << trial << ": " << plan.solver;
    EXPECT_TRUE(plan.roles_exact) << plan.solver;
    if (plan.solver.find("roles: ") != std::string::npos) ++searched;
    if (plan.span_averaging_rate < plan.averaging_rate * (1 - 1e-6)) ++selective;
  }
  std::printf("trials with a roles search: %d, where the LP returns selectively: %d\n", searched,
              selective);
  EXPECT_GE(searched, 20);
}

// ---------------------------------------------------------------------------------------------
// The compact model (README.md): without pair caps, and when no reducer uploads less than it
// downloads, the averaging LP's optimum with fixed roles has a closed form. Checked against the
// LP on swarms with capacities spread over orders of magnitude.
TEST(PlannerCompactModel, ClosedFormEqualsLpWhenReducersUploadAtLeastTheyDownload) {
  Rng rng(11);
  for (int trial = 0; trial < 400; ++trial) {
    PlannerInput in = extreme_swarm(rng, 2 + trial % 9);
    for (auto& p : in.peers) {
      if (!p.client_mode) p.upload_bps = std::max(p.upload_bps, p.download_bps);
    }
    const Plan plan = solve(in, kFixedAveraging);
    const detail::ScaledProblem p = detail::scale(in, kFixedAveraging);
    const double closed = detail::consistent_rate(p, p.can_compute) * p.unit_bps / in.gradient_bits;
    const auto computing = std::count(p.can_compute.begin(), p.can_compute.end(), true);
    if (computing == 0) {
      EXPECT_EQ(plan.averaging_rate, 0);
    } else if (computing == 1) {
      EXPECT_TRUE(std::isinf(plan.averaging_rate) && std::isinf(closed));
    } else {
      EXPECT_NEAR(plan.averaging_rate, closed, 1e-7 * closed) << "trial " << trial;
    }
  }
}

// With an upload-poor reducer the literal LP can do better than any plan in which every
// receiver gets every span: peer 3 aggregates a large span (it downloads well) but can return it
// to only some receivers, who then need less from the others. The fractions (min over receivers)
// still describe a realisable split; the averaging rate is the LP's.
TEST(PlannerCompactModel, LpCanBeatClosedFormWithUploadPoorReducer) {
  const PlannerInput in =
      make_input({peer(1, 0.582 * kGbps, 2.619 * kGbps), peer(1, 0.6075 * kGbps, 0.4212 * kGbps),
                  peer(0, 1.0952 * kGbps, 0.019146 * kGbps),
                  peer(1, 3.622 * kGbps, 114 * kGbps, /*client=*/true)},
                 4096, 1e9);
  const Plan plan = solve(in, kFixedAveraging);
  const detail::ScaledProblem p = detail::scale(in, kFixedAveraging);
  const double closed = detail::consistent_rate(p, p.can_compute) * p.unit_bps / in.gradient_bits;
  EXPECT_GT(plan.averaging_rate, closed * 1.001);
  EXPECT_LE(plan.span_averaging_rate, plan.averaging_rate * (1 + 1e-9));
  std::printf("LP %.6f, closed form %.6f, spans %.6f rounds/s\n", plan.averaging_rate, closed,
              plan.span_averaging_rate);
  EXPECT_NEAR(fraction_sum(plan), 1.0, 1e-12);
  expect_feasible(in, plan);
}

// On swarms of 10–14 peers (no pair caps, reducers not upload-poor) the compact roles search
// and the full O(n²) MIP reach the same optimum.
TEST(PlannerCompactModel, CompactRolesMatchFullMip) {
  Rng rng(3);
  for (int trial = 0; trial < 6; ++trial) {
    PlannerInput in = random_swarm(rng, 10 + trial % 5, false);
    for (auto& p : in.peers) {
      if (!p.client_mode) p.upload_bps = std::max(p.upload_bps, p.download_bps);
    }
    const Plan plan = solve(in);
    ASSERT_TRUE(plan.roles_exact);
    const detail::ScaledProblem p = detail::scale(in, PlannerOptions{});
    const detail::ReferenceRoles full = detail::reference_roles_mip(p, 1'000'000, 0.0);
    ASSERT_TRUE(full.exact);
    double single = 0;
    for (const auto& peer : in.peers) single = std::max(single, peer.compute_sps / in.target_batch);
    const double full_steps = std::max(full.rho * p.unit_bps / in.gradient_bits, single);
    EXPECT_NEAR(plan.steps_per_s, full_steps, 1e-6 * full_steps) << "trial " << trial;
  }
}

// ---------------------------------------------------------------------------------------------
// Random compositions (random_compositions.h): regional and per-pair caps, client peers, CPU-only
// reducers, asymmetric and tiny links.

// The aggregated averaging LP (per-peer totals plus transport cuts) reaches the per-pair LP's
// optimum for any roles.
TEST(PlannerAveragingLp, AggregatedFormEqualsPerPairLp) {
  Rng rng(17);
  int trials = 0, cut_rounds = 0, tighter_without_lp = 0, stopped_early = 0;
  for (std::uint64_t seed = 0; seed < 90; ++seed) {
    testing::CompositionOptions opt;
    opt.per_pair_caps = seed % 3 == 1;
    const PlannerInput in = testing::random_composition(3 + static_cast<int>(seed % 12), 500 + seed, opt);
    const detail::ScaledProblem p = detail::scale(in, PlannerOptions{});
    for (int draw = 0; draw < 3; ++draw) {
      std::vector<bool> roles(p.n, false);
      const double share = 0.3 + 0.7 * rng.uniform();
      for (int i = 0; i < p.n; ++i) roles[i] = p.can_compute[i] && rng.uniform() < share;
      if (std::count(roles.begin(), roles.end(), true) < 2) continue;
      const detail::RateResult fast = detail::averaging_lp(p, roles);
      const detail::FlowResult slow = detail::reference_averaging_lp(p, roles);
      ASSERT_TRUE(fast.ok && slow.ok);
      EXPECT_TRUE(fast.certified) << "seed " << seed;
      EXPECT_NEAR(fast.rho, slow.rho, 1e-7 * std::max(slow.rho, 1e-12)) << "seed " << seed;
      // The best split is a lower bound; the cheap first solve an upper bound.
      const detail::RateResult bounds = detail::averaging_lp(p, roles, {.stop_below = kInf});
      EXPECT_LE(bounds.lower, slow.rho * (1 + 1e-7));
      EXPECT_GE(bounds.rho, slow.rho * (1 - 1e-7));
      // Asked only whether ρ reaches a rate just above it, the LP may stop early with an upper
      // bound below that rate; asked about a rate below it, it must run to the optimum.
      const detail::RateResult above =
          detail::averaging_lp(p, roles, {.stop_below = slow.rho * 1.002});
      ASSERT_TRUE(above.ok);
      EXPECT_LT(above.rho, slow.rho * 1.002) << "seed " << seed;
      EXPECT_GE(above.rho, slow.rho * (1 - 1e-7)) << "seed " << seed;
      EXPECT_LE(above.rounds, fast.rounds) << "seed " << seed;
      stopped_early += above.rounds < fast.rounds ? 1 : 0;
      const detail::RateResult under =
          detail::averaging_lp(p, roles, {.stop_below = slow.rho * 0.998});
      EXPECT_TRUE(under.certified) << "seed " << seed;
      EXPECT_NEAR(under.rho, slow.rho, 1e-7 * std::max(slow.rho, 1e-12)) << "seed " << seed;
      // So is the pair-cap bound, which needs no LP; with caps it is sometimes below the other bound
      // without an LP (the compact model's download bound).
      const double no_lp = detail::pair_cap_bound(p, roles);
      EXPECT_GE(no_lp, slow.rho * (1 - 1e-7)) << "seed " << seed;
      tighter_without_lp += no_lp < detail::compact_download_bound(p, roles) * (1 - 1e-6) ? 1 : 0;
      cut_rounds += fast.rounds > 1 ? 1 : 0;
      ++trials;
    }
  }
  std::printf("role sets checked: %d, needing transport cuts: %d, pair-cap bound below the download bound: %d, "
              "rounds saved by stopping below a rate 0.2%% above the optimum: %d\n",
              trials, cut_rounds, tighter_without_lp, stopped_early);
  EXPECT_GE(trials, 150);
  EXPECT_GE(cut_rounds, 3);
  EXPECT_GE(tighter_without_lp, 5);
  EXPECT_GE(stopped_early, 2);
}

// The roles search against enumeration on 3–9 peers.
TEST(PlannerRolesSearch, MatchesEnumerationOnRandomCompositions) {
  int bandwidth_bound = 0, capped = 0, set_by_set = 0;
  for (std::uint64_t seed = 0; seed < 70; ++seed) {
    testing::CompositionOptions opt;
    opt.per_pair_caps = seed % 4 == 3;
    const PlannerInput in = testing::random_composition(3 + static_cast<int>(seed % 7), 40 + seed, opt);
    const Plan plan = solve(in);
    expect_feasible(in, plan);
    const double best = best_over_all_roles(in);
    EXPECT_NEAR(plan.steps_per_s, best, 1e-6 * best) << "seed " << seed << ": " << plan.solver;
    EXPECT_TRUE(plan.roles_exact) << plan.solver;
    EXPECT_EQ(plan.roles_gap, 0);
    EXPECT_EQ(plan.steps_per_s_bound, plan.steps_per_s);
    double compute = 0;
    for (std::size_t i = 0; i < in.peers.size(); ++i) {
      compute += plan.peers[i].computes ? in.peers[i].compute_sps / in.target_batch : 0;
    }
    bandwidth_bound += plan.steps_per_s < compute * (1 - 1e-9) ? 1 : 0;
    capped += in.pair_caps.empty() ? 0 : 1;
    set_by_set += plan.solver.find("role set by role set") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(bandwidth_bound, 10);
  EXPECT_GE(capped, 15);
  // Cases with few role sets are settled by testing each set instead of a MIP: checked here too.
  EXPECT_GE(set_by_set, 10);
}

// Beyond enumeration: against the literal O(n²) big-M roles MIP of docs/dedloc.md §2, solved
// to optimality by GLPK (slow, independent of the aggregated models).
TEST(PlannerRolesSearch, MatchesReferenceMipAt10To12Peers) {
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const PlannerInput in = testing::random_composition(10 + static_cast<int>(seed % 3), 3300 + seed);
    const Plan plan = solve(in);
    ASSERT_TRUE(plan.roles_exact) << plan.solver;
    const detail::ScaledProblem p = detail::scale(in, PlannerOptions{});
    const detail::ReferenceRoles full = detail::reference_roles_mip(p, 1'000'000, 0.0);
    ASSERT_TRUE(full.exact);
    double single = 0;
    for (const auto& peer : in.peers) single = std::max(single, peer.compute_sps / in.target_batch);
    const double reference = std::max(full.rho * p.unit_bps / in.gradient_bits, single);
    EXPECT_NEAR(plan.steps_per_s, reference, 1e-6 * reference) << "seed " << seed;
  }
}

// Cases of two regions split by how many computing peers the first region has (README.md, "The
// roles search", step 6), forced before any MIP and without settling cases set by set, against
// enumeration on 7–9 peers: the programs with region counts, their cheap bounds and their exact
// cuts of a region's receivers keep the optimum.
TEST(PlannerRolesSearch, CasesSplitByRegionCountMatchEnumeration) {
  int split = 0, with_mips = 0;
  for (std::uint64_t seed = 0; seed < 60 && with_mips < 8; ++seed) {
    const PlannerInput in = testing::random_composition(7 + static_cast<int>(seed % 3), 6100 + seed);
    const detail::ScaledProblem p = detail::scale(in, PlannerOptions{});
    detail::RolesSearchLimits limits;
    limits.split_regions_first = true;
    const detail::RolesResult roles = detail::search_roles(p, limits, {}, nullptr, false);
    if (roles.region_splits == 0) continue;
    ++split;
    with_mips += roles.mips > 0 ? 1 : 0;
    ASSERT_TRUE(roles.exact) << "seed " << seed;
    // The search covers two or more computing peers; one computing peer is worth s_k / B.
    double single = 0;
    for (const auto& peer : in.peers) single = std::max(single, peer.compute_sps / in.target_batch);
    const double found = std::max(roles.value * p.unit_bps / in.gradient_bits, single);
    const double best = best_over_all_roles(in);
    EXPECT_NEAR(found, best, 1e-6 * best) << "seed " << seed;
  }
  EXPECT_GE(split, 8);
  EXPECT_GE(with_mips, 8);
}

// A 48-peer composition of two regions whose roles MIPs kept overrating role sets (its optimum is
// set by upload-poor reducers in one region) ran out of MIP budget 0.32% from proven; split by
// region count, it is proven.
TEST(PlannerRolesSearch, SplitByRegionCountProvesWhatTheMipsCouldNot) {
  const Plan plan = solve(testing::random_composition(48, 48342));
  EXPECT_TRUE(plan.roles_exact) << plan.solver;
  EXPECT_NE(plan.solver.find("split by region count"), std::string::npos) << plan.solver;
}

// Regions joined by narrow caps can do best apart. On this 48-peer composition the optimum has no
// computing peer in one of its three regions, 12.5% above the best of the nested chain over all
// peers; the chain within the two other regions finds it before any MIP, so the MIPs left only
// prove it, at their root (README.md, "The roles search", step 3).
TEST(PlannerRolesSearch, RegionsThatDoBestApartAreFoundBeforeAnyBranching) {
  const PlannerInput in = testing::random_composition(48, 48328);
  const Plan plan = solve(in);
  ASSERT_TRUE(plan.roles_exact) << plan.solver;
  EXPECT_NE(plan.solver.find("(0 nodes)"), std::string::npos) << plan.solver;
  // Regions: peers that cap the same destinations.
  std::map<std::vector<std::size_t>, int> computing_in_region;
  for (std::size_t i = 0; i < in.peers.size(); ++i) {
    std::vector<std::size_t> capped;
    for (std::size_t j = 0; j < in.peers.size(); ++j) {
      if (j != i && std::isfinite(in.pair_caps[i][j])) capped.push_back(j);
    }
    computing_in_region[capped] += plan.peers[i].computes ? 1 : 0;
  }
  ASSERT_EQ(computing_in_region.size(), 3u);
  EXPECT_EQ(std::count_if(computing_in_region.begin(), computing_in_region.end(),
                          [](const auto& region) { return region.second == 0; }),
            1);
}

// Budgets and gaps: with one MIP allowed, a composition that needs more reports a proven gap,
// and its bound holds (the full search's optimum stays below it); with max_gap the search stops
// within that gap.
TEST(PlannerGap, BudgetsReportAProvenGap) {
  int gapped = 0;
  for (std::uint64_t seed = 0; seed < 40 && gapped < 3; ++seed) {
    const PlannerInput in = testing::random_composition(20, 8800 + seed);
    const Plan full = solve(in);
    ASSERT_TRUE(full.roles_exact) << full.solver;
    PlannerOptions tight;
    tight.max_mips = 1;
    tight.max_mip_nodes = 1;
    const Plan quick = solve(in, tight);
    EXPECT_LE(quick.steps_per_s, full.steps_per_s * (1 + 1e-9));
    EXPECT_GE(quick.steps_per_s_bound, full.steps_per_s * (1 - 1e-9)) << "seed " << seed;
    if (quick.roles_exact) {
      EXPECT_NEAR(quick.steps_per_s, full.steps_per_s, 1e-6 * full.steps_per_s);
      continue;
    }
    ++gapped;
    EXPECT_GT(quick.roles_gap, 0);
    EXPECT_NEAR(quick.steps_per_s_bound, quick.steps_per_s * (1 + quick.roles_gap),
                1e-9 * quick.steps_per_s_bound);
    EXPECT_NE(quick.solver.find("proven within"), std::string::npos) << quick.solver;
    EXPECT_NE(quick.solver.find("(budget spent)"), std::string::npos) << quick.solver;
    // With a max_gap the budget may still run out first: the string says which one stopped it.
    PlannerOptions tight_gap = tight;
    tight_gap.max_gap = 1e-4;
    const Plan stopped = solve(in, tight_gap);
    if (!stopped.roles_exact) {
      const bool by_gap = stopped.roles_gap <= 1e-4 * (1 + 1e-6);
      EXPECT_NE(stopped.solver.find(by_gap ? "(max_gap)" : "(budget spent)"), std::string::npos)
          << stopped.solver;
    }

    PlannerOptions loose;
    loose.max_gap = 0.05;
    const Plan near = solve(in, loose);
    EXPECT_LE(near.roles_gap, 0.05 + 1e-12);
    if (!near.roles_exact) {
      EXPECT_NE(near.solver.find("(max_gap)"), std::string::npos) << near.solver;
    }
    EXPECT_GE(near.steps_per_s * (1 + near.roles_gap), full.steps_per_s * (1 - 1e-9));
  }
  EXPECT_GE(gapped, 1);
}

// Warm starts: the previous roles only seed the search, so the value is the cold one.
TEST(PlannerWarmStart, SameValueAfterAPeerLeavesOrJoins) {
  for (std::uint64_t seed = 0; seed < 12; ++seed) {
    const int n = 12 + static_cast<int>(seed % 6);
    const PlannerInput all = testing::random_composition(n, 6100 + seed);
    const int k = static_cast<int>(seed) % n;
    PlannerInput without = all;
    without.peers.erase(without.peers.begin() + k);
    if (!without.pair_caps.empty()) {
      without.pair_caps.erase(without.pair_caps.begin() + k);
      for (auto& row : without.pair_caps) row.erase(row.begin() + k);
    }
    std::vector<std::uint64_t> keys_all, keys_without;
    for (int i = 0; i < n; ++i) {
      keys_all.push_back(100 + i);
      if (i != k) keys_without.push_back(100 + i);
    }
    Planner leaving;
    leaving.solve(all, keys_all);
    const Plan after_leave = leaving.solve(without, keys_without);
    EXPECT_NEAR(after_leave.steps_per_s, solve(without).steps_per_s, 1e-6 * after_leave.steps_per_s);
    Planner joining;
    joining.solve(without, keys_without);
    const Plan after_join = joining.solve(all, keys_all);
    EXPECT_NEAR(after_join.steps_per_s, solve(all).steps_per_s, 1e-6 * after_join.steps_per_s);
    ASSERT_TRUE(joining.last().has_value());
    EXPECT_EQ(joining.last()->steps_per_s, after_join.steps_per_s);
    // Determinism holds for a given warm start too.
    const Plan twice = Planner().solve(all, keys_all);
    EXPECT_EQ(twice.steps_per_s, solve(all).steps_per_s);
  }
  PlannerInput in = make_input({gpu(1, kGbps), gpu(1, kGbps), gpu(1, kGbps)});
  auto message = [&](auto&& call) -> std::string {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message([&] { solve(in, PlannerOptions{}, std::vector<bool>(2, true)); }).find("previous_roles"),
            std::string::npos);
  EXPECT_NE(message([&] { Planner().solve(in, {1, 2}); }).find("keys"), std::string::npos);
  EXPECT_NE(message([&] { Planner().solve(in, {1, 2, 1}); }).find("keys[2]"), std::string::npos);
}

// Warm starts of the LPs: from its own final basis the averaging LP settles in one solve (the
// exact phase and cuts are built first); from another role set's basis, or another swarm's, the
// averaging LP and the split still reach the cold optimum (the basis is repaired or dropped).
TEST(PlannerWarmStart, LpsFromAnyBasisReachTheColdOptimum) {
  Rng rng(29);
  int trials = 0, exact_phase = 0;
  detail::PlanBases other;  // the previous draw's bases: a mismatched start
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    testing::CompositionOptions opt;
    opt.per_pair_caps = seed % 3 == 1;
    const PlannerInput in = testing::random_composition(6 + static_cast<int>(seed % 20), 700 + seed, opt);
    const detail::ScaledProblem p = detail::scale(in, PlannerOptions{});
    const Plan plan = solve(in);
    for (int draw = 0; draw < 3; ++draw) {
      // The plan's roles (where caps bind most), then random ones.
      std::vector<bool> roles(p.n, false);
      for (int i = 0; i < p.n; ++i) {
        roles[i] = draw == 0 ? plan.peers[i].computes : p.can_compute[i] && rng.uniform() < 0.7;
      }
      if (std::count(roles.begin(), roles.end(), true) < 2) continue;
      detail::PlanBases own;
      const detail::RateResult cold = detail::averaging_lp(p, roles, {.finish = &own.averaging});
      const detail::SplitResult split = detail::best_split(p, roles, nullptr, &own.split);
      ASSERT_TRUE(cold.ok && cold.certified && split.ok);
      ASSERT_FALSE(own.averaging.status.empty());
      const detail::RateResult again = detail::averaging_lp(p, roles, {.start = &own.averaging});
      EXPECT_TRUE(again.certified);
      EXPECT_NEAR(again.rho, cold.rho, 1e-9 * cold.rho) << "seed " << seed;
      EXPECT_EQ(again.rounds, 1) << "seed " << seed;
      EXPECT_NEAR(detail::best_split(p, roles, &own.split).total, split.total, 1e-9 * split.total);
      if (other.averaging.status.size() > 0) {
        const detail::RateResult mixed = detail::averaging_lp(p, roles, {.start = &other.averaging});
        EXPECT_TRUE(mixed.certified);
        EXPECT_NEAR(mixed.rho, cold.rho, 1e-7 * cold.rho) << "seed " << seed;
        EXPECT_NEAR(detail::best_split(p, roles, &other.split).total, split.total, 1e-7 * split.total);
      }
      exact_phase += own.averaging.exact_phase ? 1 : 0;
      other = own;
      ++trials;
    }
  }
  std::printf("role sets: %d, with the exact phase: %d\n", trials, exact_phase);
  EXPECT_GE(trials, 160);
  EXPECT_GE(exact_phase, 8);
}

// Where the peer that leaves mattered, the previous plan's basis fits a nearby role set's new LP
// badly (from it, with the exact phase built first, this 64-peer LP took 850 primal pivots, 8× a
// cold solve): past its pivot limit the LP starts over cold, and reaches the cold optimum. The
// search tries that basis no more after the first drop. The Planner's re-solve, which also runs
// the nested chains when cases are left for MIPs, has the cold value.
TEST(PlannerWarmStart, BasisThatFitsBadlyIsDroppedForAColdSolve) {
  const PlannerInput all = testing::random_composition(65, 777000);
  PlannerInput without = all;  // peer 0 leaves
  without.peers.erase(without.peers.begin());
  for (auto& row : without.pair_caps) row.erase(row.begin());
  without.pair_caps.erase(without.pair_caps.begin());
  const detail::ScaledProblem before = detail::scale(all, PlannerOptions{});
  const detail::RolesResult old = detail::search_roles(before, {}, {}, nullptr, true);
  ASSERT_TRUE(old.bases.averaging.exact_phase);
  std::vector<int> to(65);
  for (int i = 0; i < 65; ++i) to[i] = i - 1;  // peer 0 is gone
  const detail::PlanBases start = detail::reindexed(old.bases, to);
  const detail::ScaledProblem p = detail::scale(without, PlannerOptions{});
  // The previous roles and the widest peer not computing: the re-solve's second candidate.
  const std::vector<bool> previous(old.computes.begin() + 1, old.computes.end());
  std::vector<bool> roles = previous;
  int widest = -1;
  for (int i = 0; i < p.n; ++i) {
    if (p.can_compute[i] && !roles[i] && (widest < 0 || p.both(i) > p.both(widest))) widest = i;
  }
  ASSERT_GE(widest, 0);
  roles[widest] = true;
  const detail::RateResult cold = detail::averaging_lp(p, roles);
  const detail::RateResult warm = detail::averaging_lp(p, roles, {.start = &start.averaging});
  ASSERT_TRUE(cold.certified && warm.certified);
  EXPECT_TRUE(warm.warm_dropped);
  EXPECT_FALSE(cold.warm_dropped);
  EXPECT_NEAR(warm.rho, cold.rho, 1e-9 * cold.rho);
  // The search from those bases drops them once and then leaves them (three drops of 150 pivots
  // each before), with the cold search's value.
  const detail::RolesResult warm_search = detail::search_roles(p, {}, previous, &start);
  const detail::RolesResult cold_search = detail::search_roles(p, {}, {});
  EXPECT_EQ(warm_search.warm_dropped, 1);
  EXPECT_EQ(cold_search.warm_dropped, 0);
  EXPECT_NEAR(warm_search.value, cold_search.value, 1e-9 * cold_search.value);

  std::vector<std::uint64_t> keys_all(65), keys_without(64);
  for (int i = 0; i < 65; ++i) keys_all[i] = static_cast<std::uint64_t>(i);
  for (int i = 0; i < 64; ++i) keys_without[i] = static_cast<std::uint64_t>(i + 1);
  Planner session;
  session.solve(all, keys_all);
  const Plan again = session.solve(without, keys_without);
  const Plan fresh = solve(without);
  EXPECT_TRUE(again.roles_exact);
  EXPECT_NEAR(again.steps_per_s, fresh.steps_per_s, 1e-6 * fresh.steps_per_s);
}

// A Planner through a chain of departures, joins and reorderings, with keys in no particular order:
// every warm solve has the cold solve's value and averaging rate, and fractions the links carry.
TEST(PlannerWarmStart, ChainsOfChangesKeepTheColdValue) {
  Rng rng(31);
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const int pool = 20 + static_cast<int>(seed % 3) * 4;
    const PlannerInput all = testing::random_composition(pool, 7300 + seed);
    std::vector<int> present;
    for (int i = 0; i + 4 < pool; ++i) present.push_back(i);
    Planner planner;
    for (int step = 0; step < 8; ++step) {
      const double pick = rng.uniform();
      if (pick < 0.35 && present.size() > 4) {
        present.erase(present.begin() + static_cast<long>(rng.uniform() * present.size()));
      } else if (pick < 0.7) {
        std::vector<int> away;
        for (int i = 0; i < pool; ++i) {
          if (std::find(present.begin(), present.end(), i) == present.end()) away.push_back(i);
        }
        if (!away.empty()) {
          present.insert(present.begin() + static_cast<long>(rng.uniform() * (present.size() + 1)),
                         away[static_cast<std::size_t>(rng.uniform() * away.size())]);
        }
      } else {
        std::reverse(present.begin(), present.end());
      }
      PlannerInput in = all;
      in.peers.clear();
      std::vector<std::uint64_t> keys;
      for (int i : present) {
        in.peers.push_back(all.peers[i]);
        keys.push_back(static_cast<std::uint64_t>((i * 7919) % 1009));  // unordered, distinct
      }
      if (!all.pair_caps.empty()) {
        in.pair_caps.assign(present.size(), std::vector<double>(present.size()));
        for (std::size_t a = 0; a < present.size(); ++a) {
          for (std::size_t b = 0; b < present.size(); ++b) {
            in.pair_caps[a][b] = all.pair_caps[present[a]][present[b]];
          }
        }
      }
      const Plan cold = solve(in);
      const Plan warm = Planner(planner).solve(in, keys);  // a copy: the same warm start twice
      const Plan warm_again = planner.solve(in, keys);
      EXPECT_EQ(warm.steps_per_s, warm_again.steps_per_s);
      EXPECT_NEAR(warm.steps_per_s, cold.steps_per_s, 1e-6 * cold.steps_per_s)
          << "seed " << seed << " step " << step;
      bool same_roles = true;
      for (std::size_t i = 0; i < in.peers.size(); ++i) {
        same_roles = same_roles && warm.peers[i].computes == cold.peers[i].computes;
      }
      if (same_roles && std::isfinite(cold.averaging_rate)) {
        EXPECT_NEAR(warm.averaging_rate, cold.averaging_rate, 1e-6 * cold.averaging_rate);
      }
      expect_feasible(in, warm);
    }
  }
}

// A basis is matched by item key: kind, peers and receiver set survive the packing; items of a
// peer that left are dropped, the others are renumbered with their statuses; cut receiver sets
// lose that peer, and two sets that become one are kept once; out-of-range peers get no key.
TEST(PlannerWarmStart, BasesFollowTheirPeersThroughRenumbering) {
  using K = detail::LpItemKind;
  const detail::LpItem pair{K::PairShortfall, 3, 7};
  EXPECT_EQ(detail::LpItem::of(pair.key()).kind, K::PairShortfall);
  EXPECT_EQ(detail::LpItem::of(pair.key()).a, 3);
  EXPECT_EQ(detail::LpItem::of(pair.key()).b, 7);
  EXPECT_EQ(detail::LpItem::of(pair.key()).set, -1);
  EXPECT_LT(detail::LpItem{K::Rate}.key(), detail::LpItem{K::SpanSum}.key());
  EXPECT_LT(detail::LpItem({K::Span, 2}).key(), detail::LpItem({K::Span, 10}).key());
  EXPECT_EQ(detail::LpItem({K::Span, 1 << 20}).key(), 0u);
  EXPECT_EQ(detail::LpItem{}.key(), 0u);

  detail::LpBasis basis;
  basis.sets = {{1, 2}, {1, 2, 4}, {2, 3}};  // ascending, as a recorded basis keeps them
  basis.exact_phase = true;
  auto entry = [](detail::LpItem item, int status) { return std::make_pair(item.key(), status); };
  basis.status = {entry({K::Span, 1}, GLP_BS),          entry({K::Span, 4}, GLP_NU),
                  entry({K::PairShortfall, 4, 2}, GLP_BS), entry({K::CutReturn, 1, -1, 0}, GLP_NL),
                  entry({K::CutReturn, 1, -1, 1}, GLP_BS), entry({K::CutReturn, 1, -1, 2}, GLP_NU),
                  entry({K::Cut, -1, -1, 0}, GLP_NU),      entry({K::Cut, -1, -1, 1}, GLP_BS)};
  std::sort(basis.status.begin(), basis.status.end());
  // Peer 4 leaves; peers 0–3 become 3, 2, 1, 0 (reversed).
  const detail::PlanBases moved = detail::reindexed({basis, {}}, {3, 2, 1, 0, -1});
  const detail::LpBasis& out = moved.averaging;
  EXPECT_TRUE(out.exact_phase);
  // {1, 2} and {1, 2, 4} are both {1, 2} → {1, 2} after renumbering; {2, 3} → {0, 1}.
  ASSERT_EQ(out.sets, (std::vector<std::vector<int>>{{0, 1}, {1, 2}}));
  std::map<std::tuple<K, int, int, std::vector<int>>, int> got;
  for (std::size_t k = 0; k < out.status.size(); ++k) {
    if (k > 0) EXPECT_LT(out.status[k - 1].first, out.status[k].first);  // sorted, no repeats
    const detail::LpItem item = detail::LpItem::of(out.status[k].first);
    got[{item.kind, item.a, item.b, item.set < 0 ? std::vector<int>{} : out.sets[item.set]}] =
        out.status[k].second;
  }
  const std::map<std::tuple<K, int, int, std::vector<int>>, int> want{
      {{K::Span, 2, -1, {}}, GLP_BS},
      {{K::CutReturn, 2, -1, {1, 2}}, GLP_NL},  // the first of the two sets that became one
      {{K::CutReturn, 2, -1, {0, 1}}, GLP_NU},
      {{K::Cut, -1, -1, {1, 2}}, GLP_NU}};
  EXPECT_EQ(got, want);
}

// The check that lets a warm start skip the simplex: an optimal basis passes; the same basis
// after a cost change that makes a nonbasic column attractive, or a bound change that puts a
// basic variable out of its bounds, does not.
TEST(PlannerWarmStart, OnlyAnOptimalBasisSkipsTheSimplex) {
  detail::TermOff quiet;
  // max x + 2y, x + y <= 4, x <= 3, y <= 2 (optimum x = 2, y = 2).
  detail::Model model;
  const int x = model.col(0, 3, 1), y = model.col(0, 2, 2);
  const int r = model.row_le(4);
  model.coef(r, x, 1);
  model.coef(r, y, 1);
  glp_prob* lp = model.load();
  ASSERT_TRUE(detail::solve_simplex(lp));
  EXPECT_TRUE(detail::basis_is_optimal(lp));
  EXPECT_NEAR(glp_get_col_prim(lp, x), 2, 1e-12);
  glp_set_obj_coef(lp, y, 0.5);  // y, at its upper bound, is now worth less than the x it
  EXPECT_FALSE(detail::basis_is_optimal(lp));  // displaces in the row: it should come down
  glp_set_obj_coef(lp, y, 2);
  EXPECT_TRUE(detail::basis_is_optimal(lp));
  glp_set_row_bnds(lp, r, GLP_UP, 0, 1);  // x = 1 − 2 < 0: the basic x is out of its bounds
  EXPECT_FALSE(detail::basis_is_optimal(lp));
}

// The case: a peer with 147 b/s of upload. Its share of the gradient, returned to every
// other computing peer at the plan's rate, fits its upload; the achievable rate is what the
// fractions really reach (checked on the input's own numbers), not solver noise.
TEST(PlannerFractions, TinyLinkGetsOnlyAShareItCanCarry) {
  std::vector<PeerCapacity> peers(6, gpu(100, 0.4 * kGbps));
  peers.push_back(peer(0, 1 * kGbps, 147));  // a CPU peer behind a 147 b/s uplink
  peers.push_back(peer(100, 0.2 * kGbps, 147 * 3));
  const PlannerInput in = make_input(peers, 4096, 25'557'032.0 * 16);
  for (const PlannerOptions& opt : {PlannerOptions{}, PlannerOptions{Roles::AllComputeCapable}}) {
    const Plan plan = solve(in, opt);
    expect_feasible(in, plan);
    int m = 0;
    for (const auto& p : plan.peers) m += p.computes ? 1 : 0;
    ASSERT_GE(m, 2);
    const double f = plan.peers[6].fraction;
    // The CPU peer returns f·P to m computing peers per round.
    EXPECT_LE(f * in.gradient_bits * m * plan.span_averaging_rate, 147 * (1 + 1e-9));
    EXPECT_NEAR(plan.round_time_s, 1 / plan.span_averaging_rate, 1e-12 * plan.round_time_s);
    EXPECT_LE(plan.span_averaging_rate, plan.averaging_rate * (1 + 1e-12));
    EXPECT_NEAR(fraction_sum(plan), 1.0, 1e-12);
  }
}

// Every plan's split fits every capacity, and the reported rates are consistent: round_time_s is
// 1 / span_averaging_rate, achievable_steps_per_s = min(compute, span rate) <= steps_per_s.
TEST(PlannerFractions, SplitFitsEveryCapacityOnRandomCompositions) {
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    testing::CompositionOptions opt;
    opt.per_pair_caps = seed % 2 == 1;
    const PlannerInput in = testing::random_composition(4 + static_cast<int>(seed % 20), 7700 + seed, opt);
    const Plan plan = solve(in, PlannerOptions{seed % 3 == 0 ? Roles::AllComputeCapable : Roles::Optimize});
    expect_feasible(in, plan);
    int m = 0;
    double compute = 0;
    for (std::size_t i = 0; i < in.peers.size(); ++i) {
      m += plan.peers[i].computes ? 1 : 0;
      compute += plan.peers[i].computes ? in.peers[i].compute_sps / in.target_batch : 0;
    }
    if (m < 2) continue;
    EXPECT_LE(plan.span_averaging_rate, plan.averaging_rate * (1 + 1e-12));
    if (plan.span_averaging_rate > 0) {
      EXPECT_NEAR(plan.round_time_s, 1 / plan.span_averaging_rate, 1e-12 * plan.round_time_s);
    }
    EXPECT_NEAR(plan.achievable_steps_per_s, std::min(compute, plan.span_averaging_rate),
                1e-12 * plan.achievable_steps_per_s);
    EXPECT_LE(plan.achievable_steps_per_s, plan.steps_per_s * (1 + 1e-12));
    if (plan.span_averaging_rate > 0) EXPECT_NEAR(fraction_sum(plan), 1.0, 1e-12) << seed;
  }
}

// ---------------------------------------------------------------------------------------------
// Integral roles: the LP relaxation of the roles program is fractional on this swarm, yet the
// plan's roles are 0/1 and optimal (equal to the enumeration).
TEST(PlannerRoles, RelaxationIsFractionalButPlanRolesAreIntegral) {
  const double P = 1e9;
  const double s = 0.2 * kGbps * 4096 / P;
  std::vector<PeerCapacity> peers(3, gpu(s, kGbps));
  peers.push_back(gpu(4 * s, 0.05 * kGbps));
  const PlannerInput in = make_input(peers, 4096, P);
  const auto relaxed = detail::reference_roles_relaxation(detail::scale(in, PlannerOptions{}));
  bool fractional = false;
  for (double c : relaxed) fractional = fractional || (c > 1e-6 && c < 1 - 1e-6);
  EXPECT_TRUE(fractional) << relaxed[0] << " " << relaxed[1] << " " << relaxed[2] << " "
                          << relaxed[3];
  const Plan plan = solve(in);
  EXPECT_TRUE(plan.roles_exact);
  EXPECT_NEAR(plan.steps_per_s, best_over_all_roles(in), 1e-7 * plan.steps_per_s);
}

// ---------------------------------------------------------------------------------------------
// Determinism: every peer solves independently; identical input must give identical bits.
TEST(PlannerDeterminism, SolvingTwiceIsBitIdentical) {
  Rng rng(7);
  const PlannerInput in = random_swarm(rng, 16, true);
  for (const PlannerOptions& opt : {PlannerOptions{}, PlannerOptions{Roles::AllComputeCapable}}) {
    const Plan a = solve(in, opt);
    const Plan b = solve(in, opt);
    ASSERT_EQ(a.peers.size(), b.peers.size());
    EXPECT_EQ(std::memcmp(&a.steps_per_s, &b.steps_per_s, sizeof(double)), 0);
    EXPECT_EQ(std::memcmp(&a.round_time_s, &b.round_time_s, sizeof(double)), 0);
    for (std::size_t i = 0; i < a.peers.size(); ++i) {
      EXPECT_EQ(a.peers[i].computes, b.peers[i].computes);
      EXPECT_EQ(std::memcmp(&a.peers[i].fraction, &b.peers[i].fraction, sizeof(double)), 0);
      EXPECT_EQ(std::memcmp(a.return_rate[i].data(), b.return_rate[i].data(),
                            sizeof(double) * a.return_rate[i].size()),
                0);
    }
    EXPECT_EQ(a.solver, b.solver);
  }
}

// ---------------------------------------------------------------------------------------------
// Degenerate inputs and validation.

TEST(PlannerDegenerate, NoComputeCapablePeer) {
  const PlannerInput in = make_input({cpu(kGbps), cpu(kGbps)});
  for (const PlannerOptions& opt : {PlannerOptions{}, PlannerOptions{Roles::AllComputeCapable}}) {
    const Plan plan = solve(in, opt);
    EXPECT_EQ(plan.steps_per_s, 0);
    EXPECT_EQ(plan.averaging_rate, 0);
    EXPECT_EQ(plan.round_time_s, kInf);
    EXPECT_FALSE(plan.peers[0].computes || plan.peers[1].computes);
    EXPECT_EQ(fraction_sum(plan), 0);
  }
}

TEST(PlannerDegenerate, NoBandwidthAtAll) {
  const PlannerInput in = make_input({gpu(100, 0), gpu(300, 0), gpu(200, 0, true), cpu(0)});
  // Roles optimised: the fastest peer trains alone.
  const Plan best = solve(in);
  EXPECT_NEAR(best.steps_per_s, 300.0 / 4096, 1e-15);
  EXPECT_TRUE(best.peers[1].computes);
  EXPECT_FALSE(best.peers[0].computes || best.peers[2].computes);
  EXPECT_EQ(best.round_time_s, 0);  // nothing to exchange
  EXPECT_EQ(best.peers[1].fraction, 1);
  // Everyone computing: nothing can be averaged.
  const Plan all = solve(in, PlannerOptions{Roles::AllComputeCapable});
  EXPECT_EQ(all.steps_per_s, 0);
  EXPECT_EQ(all.round_time_s, kInf);
}

TEST(PlannerDegenerate, SinglePeer) {
  const Plan plan = solve(make_input({gpu(100, kGbps, true)}));
  EXPECT_NEAR(plan.steps_per_s, 100.0 / 4096, 1e-15);
  EXPECT_EQ(plan.averaging_rate, kInf);
  EXPECT_EQ(plan.round_time_s, 0);
  EXPECT_EQ(plan.peers[0].fraction, 1);
}

TEST(PlannerValidation, RejectsBadInput) {
  auto message = [](const PlannerInput& in, const PlannerOptions& opt = {}) -> std::string {
    try {
      solve(in, opt);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message(make_input({})).find("no peers"), std::string::npos);
  PlannerInput in = make_input({gpu(1, kGbps), gpu(1, kGbps), gpu(1, kGbps)});
  in.peers[2].download_bps = std::nan("");
  EXPECT_NE(message(in).find("peer 2: download_bps"), std::string::npos) << message(in);
  in.peers[2].download_bps = 1;
  in.peers[1].compute_sps = -3;
  EXPECT_NE(message(in).find("peer 1: compute_sps"), std::string::npos) << message(in);
  in.peers[1].compute_sps = 3;
  in.peers[0].upload_bps = kInf;
  EXPECT_NE(message(in).find("peer 0: upload_bps"), std::string::npos) << message(in);
  in.peers[0].upload_bps = 1;
  in.pair_caps.assign(2, std::vector<double>(3, kInf));
  EXPECT_NE(message(in).find("pair_caps"), std::string::npos);
  in.pair_caps.assign(3, std::vector<double>(3, kInf));
  in.pair_caps[0][2] = -1;
  EXPECT_NE(message(in).find("pair_caps[0][2]"), std::string::npos) << message(in);
  in.pair_caps[0][2] = kInf;
  in.pair_caps[1][1] = std::nan("");  // the diagonal is ignored
  EXPECT_EQ(message(in), "");
  in.gradient_bits = 0;
  EXPECT_NE(message(in).find("gradient_bits"), std::string::npos);
  in.gradient_bits = 1e9;
  in.target_batch = std::nan("");
  EXPECT_NE(message(in).find("target_batch"), std::string::npos);
  EXPECT_EQ(message(in, kFixedAveraging), "");  // B is not used without the compute term
  EXPECT_NE(
      message(in, PlannerOptions{Roles::Optimize, Objective::AveragingOnly}).find("AveragingOnly"),
      std::string::npos);
  in.target_batch = 4096;
  PlannerOptions bad;
  bad.max_gap = -0.1;
  EXPECT_NE(message(in, bad).find("max_gap"), std::string::npos);
  bad.max_gap = std::nan("");
  EXPECT_NE(message(in, bad).find("max_gap"), std::string::npos);
  bad = PlannerOptions{};
  bad.max_mips = -1;
  EXPECT_NE(message(in, bad).find("max_mips"), std::string::npos);
  bad = PlannerOptions{};
  bad.max_mip_nodes = -1;
  EXPECT_NE(message(in, bad).find("max_mip_nodes"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Table 1 (docs/dedloc.md): ResNet-50, 25,557,032 parameters sent as fp16. Roles fixed (every GPU
// peer's gradient is averaged), objective = averaging rate. Ideal references in the same rate
// model: AR = equal shares among the GPU peers, round = max_i 2(n−1)/n·P / min(d_i, u_i);
// PS = the best single peer j reducing everything, round = max(#other senders·P / min(d_j, u_j),
// max_i P / min(d_i, u_i)).
double ar_ideal(const PlannerInput& in) {
  int n = 0;
  double slowest = kInf;
  for (const auto& p : in.peers) {
    if (p.compute_sps > 0) {
      ++n;
      slowest = std::min({slowest, p.download_bps, p.upload_bps});
    }
  }
  return 2.0 * (n - 1) / n * in.gradient_bits / slowest;
}

double ps_ideal(const PlannerInput& in) {
  double best = kInf;
  for (std::size_t j = 0; j < in.peers.size(); ++j) {
    double worst = 0;
    int senders = 0;
    for (std::size_t i = 0; i < in.peers.size(); ++i) {
      if (i == j || in.peers[i].compute_sps == 0) continue;
      ++senders;
      worst = std::max(
          worst, in.gradient_bits / std::min(in.peers[i].download_bps, in.peers[i].upload_bps));
    }
    const auto& s = in.peers[j];
    worst = std::max(worst, senders * in.gradient_bits / std::min(s.download_bps, s.upload_bps));
    best = std::min(best, worst);
  }
  return best;
}

TEST(PlannerTable1, SetupsAtoD) {
  const double P = 25'557'032.0 * 16;
  const std::vector<PeerCapacity> a(8, gpu(100, 1 * kGbps));
  const std::vector<PeerCapacity> b(16, gpu(100, 0.2 * kGbps));
  std::vector<PeerCapacity> c = a;
  c.insert(c.end(), b.begin(), b.end());
  std::vector<PeerCapacity> d = b;
  d.push_back(cpu(2.5 * kGbps));
  struct Setup {
    const char* name;
    std::vector<PeerCapacity> peers;
    double expected;  // hand-derived below
  };
  // A, B: butterfly 2(n−1)/n·P/b. C: a slow peer must upload its gradient and download the
  // average, so ρ <= 0.2 Gb/s, reached with the fast peers reducing (30·z_f <= 1 Gb/s holds at
  // z_f = 0.025): P/0.2 Gb/s. D: slow download 30·z_s + z_c <= 0.2, CPU 16·z_c <= 2.5:
  // z_c = 0.15625, z_s = 0.04375/30, ρ = 16·z_s + z_c = 0.179583 Gb/s.
  const std::vector<Setup> setups = {
      {"A", a, 2.0 * 7 / 8 * P / kGbps},
      {"B", b, 2.0 * 15 / 16 * P / (0.2 * kGbps)},
      {"C", c, P / (0.2 * kGbps)},
      {"D", d, P / ((16 * 0.04375 / 30 + 0.15625) * kGbps)},
  };
  for (const auto& setup : setups) {
    const PlannerInput in = make_input(setup.peers, 4096, P);
    const Plan plan = solve(in, kFixedAveraging);
    expect_feasible(in, plan);
    const double ar = ar_ideal(in), ps = ps_ideal(in);
    std::printf("Table 1 setup %s: planner %.4f s, AR ideal %.4f s, PS ideal %.4f s\n", setup.name,
                plan.round_time_s, ar, ps);
    EXPECT_NEAR(plan.round_time_s, setup.expected, 1e-6 * setup.expected) << setup.name;
    EXPECT_LE(plan.round_time_s, ar * (1 + 1e-9)) << setup.name;
    EXPECT_LE(plan.round_time_s, ps * (1 + 1e-9)) << setup.name;
    // Symmetric links: every receiver gets every span, so the fractions realise the LP's rate.
    EXPECT_NEAR(plan.span_averaging_rate, plan.averaging_rate, 1e-7 * plan.averaging_rate);
    EXPECT_NEAR(fraction_sum(plan), 1.0, 1e-12);
  }
  const Plan plan_d = solve(make_input(d, 4096, P), kFixedAveraging);
  EXPECT_GT(plan_d.peers[16].fraction, 0.8);  // 0.15625 / 0.179583 = 0.87
  EXPECT_FALSE(plan_d.peers[16].computes);
}

}  // namespace
}  // namespace swarmlab::core::planner
