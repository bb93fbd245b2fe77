#pragma once
// The DeDLOC planner (docs/dedloc.md §2): chooses which peers compute gradients and which share
// of the gradient vector every peer aggregates, maximising optimizer steps per second. Solved with
// GLPK: the averaging LP on an aggregated form, a roles search that proves its answer optimal or
// reports the gap, and the split of the gradient that real links can carry. See
// core/planner/README.md for the formulation and every modelling decision.
//
// Deterministic: the same input (same peer order, same warm start) gives a bit-identical Plan,
// so every peer can solve the problem independently and agree without exchanging messages. The
// planner never measures its own running time: its limits are node and round budgets.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace swarmlab::core::planner {

namespace detail {
struct PlanBases;  // lp_model.h
}  // namespace detail

struct PeerCapacity {
  double compute_sps = 0;    // samples/s; 0 = no accelerator (cannot compute)
  double download_bps = 0;   // bits/s
  double upload_bps = 0;     // bits/s
  bool client_mode = false;  // accepts no incoming connections: aggregates nothing
  friend bool operator==(const PeerCapacity&, const PeerCapacity&) = default;
};

// Reachability between peers (docs/trust.md §4). A route says how bytes from one peer get to
// another: directly, through a relay (its download, then its upload), or not at all.
inline constexpr int kDirect = -1;
inline constexpr int kUnreachable = -2;

// A relay's access link. `member`: the relay is also that peer of the input, whose own traffic
// shares these links (the relay's capacity is then that peer's).
struct RelayLink {
  double download_bps = 0;
  double upload_bps = 0;
  std::optional<std::size_t> member;
  friend bool operator==(const RelayLink&, const RelayLink&) = default;
};

struct PlannerInput {
  std::vector<PeerCapacity> peers;
  // Optional directed pairwise caps t_ij in bits/s (i sends to j); empty = none. n×n, use
  // +infinity for "no cap". Diagonal ignored.
  std::vector<std::vector<double>> pair_caps;
  double target_batch = 0;   // B, samples per optimizer step
  double gradient_bits = 0;  // P, bits of one gradient as transferred on the wire
  // Optional n×n routes, [i][j] for i → j: kDirect, kUnreachable, or r >= 0 = through relays[r].
  // Empty: every pair is direct except between two client-mode peers, which is unreachable. A
  // client-mode peer aggregates only when every compute-capable peer reaches it and it reaches
  // them (directly after a hole punch, or through a relay); the executed split charges relayed
  // traffic to the relay's links. Pair caps apply to the two ends, not to the relay.
  std::vector<std::vector<int>> routes;
  std::vector<RelayLink> relays;
  friend bool operator==(const PlannerInput&, const PlannerInput&) = default;
};

// Whether peer i can aggregate: not in client mode, or reachable both ways from every other
// compute-capable peer by `routes`.
bool can_aggregate(const PlannerInput& input, std::size_t i);

// Per relay of `input`: how many bits its links carry (in, and the same out) per averaged
// gradient, with `computes` sending and fractions `f`: every relayed pair x → y carries
// [x computes]·f_y + [y computes]·f_x of the gradient.
std::vector<double> relay_loads(const PlannerInput& input, const std::vector<bool>& computes, const std::vector<double>& f);

// Optimize: roles c_i chosen by the planner (exact MIP).
// AllComputeCapable: c_i = 1 for every peer with compute > 0 (Table 1: everyone's gradient is
// averaged); a pure LP.
enum class Roles { Optimize, AllComputeCapable };

// StepsPerSecond: max min(Σ s_i c_i / B, averaging rate).
// AveragingOnly: drops the compute term Σ s_i c_i / B (maximise the averaging rate alone). Only
// meaningful with fixed roles: with Roles::Optimize it would be maximised trivially by letting at
// most one peer compute, so that combination is rejected (std::invalid_argument).
enum class Objective { StepsPerSecond, AveragingOnly };

// The roles search's budgets where PlannerOptions leaves them at 0 (README.md, "The roles
// search", step 7): MIPs in all, and branch-and-bound nodes per MIP, 400000 / n² within
// [50, 20000] for n peers.
inline constexpr int kDefaultMaxMips = 40;
inline constexpr std::int64_t kMipNodeScale = 400000, kMinMipNodes = 50, kMaxMipNodes = 20000;
inline std::int64_t default_max_mip_nodes(int n) {
  return std::clamp<std::int64_t>(kMipNodeScale / (static_cast<std::int64_t>(n) * n), kMinMipNodes,
                                  kMaxMipNodes);
}

struct PlannerOptions {
  Roles roles = Roles::Optimize;
  Objective objective = Objective::StepsPerSecond;
  // Branch-and-bound node budget per roles MIP; 0 = default_max_mip_nodes(n). Counted in nodes, not seconds, so the outcome stays deterministic. When a budget
  // runs out, the best roles found are used, Plan::roles_exact is false and Plan::roles_gap says
  // how far from optimal they can be at most.
  std::int64_t max_mip_nodes = 0;
  // Roles MIPs solved in all (one per step of the search); 0 = kDefaultMaxMips. Also a
  // deterministic budget: when it runs out, the plan reports the gap it proved.
  int max_mips = 0;
  // Stop the roles search once no roles can beat the plan by more than this relative gap (e.g.
  // 0.01); the plan then reports the gap it proved. 0 = prove optimality (within 1e-6).
  double max_gap = 0;
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
  // The LP's averaging rate: min over receivers (computing peers) of Σ_j g_ji / P, full gradients
  // averaged per second. +infinity when at most one peer computes (nothing to exchange); 0 when
  // nothing can flow. The LP may return a reducer's span to some receivers only, which no real
  // all-reduce can do (README.md, "Fractions"), so this can exceed what any split of the
  // gradient achieves.
  double averaging_rate = 0;
  // The achievable averaging rate: rounds per second of a butterfly round with `peers[].fraction`
  // (every computing peer sends its part of span j to reducer j, which returns the averaged span
  // to every computing peer), checked against every capacity. <= averaging_rate; equal to it
  // unless the LP relies on selective returns. +infinity / 0 as averaging_rate.
  double span_averaging_rate = 0;
  // 1 / span_averaging_rate: the time of one round with these fractions (+infinity when nothing
  // can be averaged, 0 when nothing needs to be).
  double round_time_s = 0;
  // min(Σ s_i c_i / B, span_averaging_rate) (span_averaging_rate alone for AveragingOnly): the
  // steps per second these roles and fractions deliver.
  double achievable_steps_per_s = 0;
  std::vector<PeerPlan> peers;
  std::string solver;       // what was done: the models, MIPs, nodes, and whether roles are exact
  // Roles::Optimize: whether the roles are proven optimal (steps_per_s_bound == steps_per_s).
  // Always true with fixed roles.
  bool roles_exact = true;
  // A proven upper bound on steps_per_s over every choice of roles, and the relative gap
  // steps_per_s_bound / steps_per_s − 1 (0 when roles_exact). With fixed roles, steps_per_s.
  double steps_per_s_bound = 0;
  double roles_gap = 0;
  // The executed split, in bits/s, n×n, [i][j] = from i to j: send_rate[i][j] = rate at which
  // computing i streams its parts of j's span to reducer j, return_rate[j][i] = rate at which
  // reducer j returns its averaged span to computing i, both span_averaging_rate·P·f_j. Diagonal
  // entries are local (free) transfers.
  std::vector<std::vector<double>> send_rate;    // a_ij
  std::vector<std::vector<double>> return_rate;  // g_ij
  // Aggregation rate of every reducer in that split (bits/s; 0 for peers that aggregate nothing).
  std::vector<double> aggregation_rate;
};

// Throws std::invalid_argument for an empty peer list, negative, NaN or infinite capacities,
// NaN or negative pair caps, a pair_caps matrix that is not n×n, a non-positive or non-finite B
// (StepsPerSecond) or P, Objective::AveragingOnly with Roles::Optimize, negative budgets and a
// negative or non-finite max_gap.
Plan solve(const PlannerInput& input, const PlannerOptions& options = {});

// Warm start: `previous_roles[i]` says whether peer i computed in the previous plan (one entry per
// peer of `input`, or empty for none). Those roles seed the search as an incumbent, which makes a
// re-solve after a peer joins or leaves much faster; the value found is the same (to 1e-6, when
// neither search runs out of budget). Where several
// role choices are equally good the one returned can depend on the warm start, so peers that must
// agree should re-solve from the same previous plan. Also throws std::invalid_argument when
// previous_roles is neither empty nor one entry per peer.
Plan solve(const PlannerInput& input, const PlannerOptions& options,
           const std::vector<bool>& previous_roles);

// Keeps the last plan and warm-starts the next solve from it: its roles seed the roles search, and
// the final bases of its averaging LP and split start those of the next (README.md, "Warm
// starts"). Peers are matched across solves by caller-chosen keys (e.g. peer ids), so joins,
// departures and reordering are all fine. The value found is the cold solve's (to 1e-6); the
// rates and fractions may differ from its in the last digits, or be another of several equally
// good splits, as another basis may end on another vertex.
class Planner {
 public:
  explicit Planner(PlannerOptions options = {}) : options_(options) {}

  // `keys` has one distinct entry per peer of `input` (else std::invalid_argument).
  Plan solve(const PlannerInput& input, const std::vector<std::uint64_t>& keys);
  const std::optional<Plan>& last() const { return last_; }
  void reset();

 private:
  PlannerOptions options_;
  std::optional<Plan> last_;
  std::vector<std::uint64_t> last_keys_;  // the keys of last_'s peers
  // last_'s LP bases (peers numbered as in its input); shared, never modified, so copies of a
  // Planner stay cheap.
  std::shared_ptr<const detail::PlanBases> bases_;
};

}  // namespace swarmlab::core::planner
