#pragma once
// Internal to the planner: the scaled problem and the models solved on it. planner.cc validates
// the input and assembles the Plan; everything here works in scaled rate units.
#include <cstdint>
#include <vector>

#include "core/planner/planner.h"

namespace swarmlab::core::planner::detail {

// Rates are in units of `unit_bps` bits/s: the best min(download, upload) among compute-capable
// peers. With two or more peers computing the averaging rate ρ (= ξ·P) never exceeds the
// smallest min(d_i, u_i) of a computing peer, so ρ <= 1 in these units, and capacities are
// clamped where they can no longer matter (2n for a peer, 2 for a pair; see README.md). GLPK
// then sees numbers in [0, 2n] whatever the input's magnitudes.
struct ScaledProblem {
  int n = 0;
  double unit_bps = 1;
  std::vector<double> down, up;
  // kappa_i = s_i·P / (B·unit), clamped to 1: the averaging rate at which i's compute alone
  // would stop the compute term from binding. 0 for AveragingOnly.
  std::vector<double> kappa;
  std::vector<bool> can_compute;         // s_i > 0
  std::vector<bool> can_reduce;          // not client mode
  std::vector<std::vector<double>> cap;  // t_ij scaled; +inf = none; empty = no finite cap at all
  bool compute_term = true;              // Objective::StepsPerSecond

  double pair_cap(int i, int j) const;
  double both(int i) const { return down[i] < up[i] ? down[i] : up[i]; }  // min(d_i, u_i)
};

// Validated input → scaled problem (defined in planner.cc).
ScaledProblem scale(const PlannerInput& in, const PlannerOptions& opt);

struct RolesResult {
  std::vector<bool> computes;  // empty when nothing beat the cutoff
  bool exact = false;          // proven optimal (or proven that nothing beats the cutoff)
  double rho = 0;              // objective in scaled rate units: min(Σκc, averaging rate)
  std::int64_t nodes = 0;      // branch-and-bound nodes, all MIPs together
  int mips = 0;                // MIPs solved
};

// --- The full model of docs/dedloc.md §2 (any input, including pair caps) -------------------

// Phase 1 for Roles::Optimize: the O(n²) mixed-integer program with c binary, looking only for
// plans with ρ >= cutoff and at least two computing peers.
RolesResult solve_roles_mip(const ScaledProblem& p, std::int64_t max_nodes, double cutoff);

// Its LP relaxation (c continuous in [0,1]); c_i per peer. Exposed for tests only.
std::vector<double> solve_roles_relaxation(const ScaledProblem& p);

struct FlowResult {
  bool ok = false;
  double rho = 0;                      // max averaging rate (scaled)
  std::vector<double> z;               // aggregation rate per peer
  std::vector<std::vector<double>> g;  // g[j][i], reducer j returns to i
};

// Phases 2 and 3 with the roles fixed (at least two computing peers): maximise the averaging
// rate, then (if `balance`), holding it, maximise Σ_j min_i g_ji so that the fractions are
// meaningful.
FlowResult solve_fixed_roles(const ScaledProblem& p, const std::vector<bool>& computes,
                             bool balance);

// --- The compact model (no pair caps) --------------------------------------------------------

// Without pair caps, and when no reducer uploads less than it downloads, the averaging LP with
// fixed roles has a closed-form optimum. With m >= 3 computing peers, q of them reducers, and
// b_i = min(d_i, u_i):
//   ρ = min( min_{i computes} b_i,
//            (Σ_{computing reducers} b_i + (m−2)/m · Σ_{other reducers} b_i) / (m − 2 + q) ).
// It is the best plan in which every receiver gets every span; README.md derives it and proves
// it optimal for the LP under that condition. +inf when fewer than two peers compute.
double consistent_rate(const ScaledProblem& p, const std::vector<bool>& computes);

// Phase 1 for Roles::Optimize without pair caps: a greedy incumbent on the closed form, then one
// small MIP per number of computing peers m, each only searching for plans better than the best
// so far. Exact; needs p.cap empty and p.compute_term.
RolesResult solve_roles_compact(const ScaledProblem& p, std::int64_t max_nodes);

}  // namespace swarmlab::core::planner::detail
