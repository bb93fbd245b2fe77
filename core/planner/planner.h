#pragma once
// The DeDLOC planner (docs/dedloc.md §2): chooses which peers compute gradients and which share of
// the gradient vector every peer aggregates, maximising optimizer steps per second. Solved with
// GLPK: an exact mixed-integer program for the roles, then LPs with the roles fixed for the
// averaging plan. See core/planner/README.md for the formulation and every modelling decision.
//
// Deterministic: the same input (same peer order) gives a bit-identical Plan, so every peer can
// solve the problem independently and agree without exchanging messages. The planner never
// measures its own running time.
#include <cstdint>
#include <string>
#include <vector>

namespace swarmlab::core::planner {

struct PeerCapacity {
  double compute_sps = 0;    // samples/s; 0 = no accelerator (cannot compute)
  double download_bps = 0;   // bits/s
  double upload_bps = 0;     // bits/s
  bool client_mode = false;  // accepts no incoming connections: aggregates nothing
};

struct PlannerInput {
  std::vector<PeerCapacity> peers;
  // Optional directed pairwise caps t_ij in bits/s (i sends to j); empty = none. n×n, use
  // +infinity for "no cap". Diagonal ignored.
  std::vector<std::vector<double>> pair_caps;
  double target_batch = 0;   // B, samples per optimizer step
  double gradient_bits = 0;  // P, bits of one gradient as transferred on the wire
};

// Optimize: roles c_i chosen by the planner (exact MIP).
// AllComputeCapable: c_i = 1 for every peer with compute > 0 (Table 1: everyone's gradient is
// averaged); a pure LP.
enum class Roles { Optimize, AllComputeCapable };

// StepsPerSecond: max min(Σ s_i c_i / B, averaging rate).
// AveragingOnly: drops the compute term Σ s_i c_i / B (maximise the averaging rate alone). Only
// meaningful with fixed roles: with Roles::Optimize it would be maximised trivially by letting at
// most one peer compute, so that combination is rejected (std::invalid_argument).
enum class Objective { StepsPerSecond, AveragingOnly };

struct PlannerOptions {
  Roles roles = Roles::Optimize;
  Objective objective = Objective::StepsPerSecond;
  // Branch-and-bound node budget per roles MIP; 0 = automatic: 400000 / n² nodes within
  // [50, 20000], so that even an exhausted search stays within seconds at 64 peers. Counted in
  // nodes, not seconds, so the outcome stays deterministic. When exhausted, the best roles found
  // are used and Plan::roles_exact is false.
  std::int64_t max_mip_nodes = 0;
};

struct PeerPlan {
  bool computes = false;  // c_i: computes and sends gradients
  double fraction = 0;    // f_i: share of the gradient vector this peer aggregates
};

struct Plan {
  // ξ at the optimum of the requested objective: min(Σ s_i c_i / B, averaging_rate), or just
  // averaging_rate with Objective::AveragingOnly. +infinity only for AveragingOnly with a single
  // computing peer.
  double steps_per_s = 0;
  // min over receivers (computing peers) of Σ_j g_ji / P: full gradients averaged per second.
  // +infinity when at most one peer computes (nothing to exchange); 0 when nothing can flow.
  double averaging_rate = 0;
  double round_time_s = 0;  // P / min_i Σ_j g_ji (= 1/averaging_rate; +infinity when rate is 0)
  // Σ_j min_i g_ji / P: the rate at which the fractions themselves are averaged when every
  // receiver gets every reducer's span. Equals averaging_rate except where the LP returns an
  // upload-poor reducer's output to some receivers only (README.md, "Selective returns").
  double span_averaging_rate = 0;
  std::vector<PeerPlan> peers;
  std::string solver;       // what was done, e.g. "glpk branch-and-cut on the compact roles ..."
  bool roles_exact = true;  // whether integral roles came from an exact MIP solve
  // Rates in bits/s, n×n, [i][j] = from i to j. Diagonal entries are local (free) transfers:
  // send_rate[j][j] = z_j when j computes and aggregates, return_rate[j][j] = g_jj.
  std::vector<std::vector<double>> send_rate;    // a_ij
  std::vector<std::vector<double>> return_rate;  // g_ij
  // Aggregation rate z_j of every reducer (bits/s; 0 for peers that aggregate nothing).
  std::vector<double> aggregation_rate;
};

// Throws std::invalid_argument for an empty peer list, negative, NaN or infinite capacities,
// NaN or negative pair caps, a pair_caps matrix that is not n×n, a non-positive or non-finite B
// (StepsPerSecond) or P, and Objective::AveragingOnly with Roles::Optimize.
Plan solve(const PlannerInput& input, const PlannerOptions& options = {});

}  // namespace swarmlab::core::planner
