#include "core/planner/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/planner/lp_model.h"

namespace swarmlab::core::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Relative size below which a solver value is numerical noise.
constexpr double kNoise = 1e-9;

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void check_capacity(double v, std::size_t peer, const char* field) {
  if (!std::isfinite(v) || v < 0) {
    throw std::invalid_argument("planner: peer " + std::to_string(peer) + ": " + field +
                                " must be a finite number >= 0 (got " + number(v) + ")");
  }
}

void validate(const PlannerInput& in, const PlannerOptions& opt) {
  if (in.peers.empty()) throw std::invalid_argument("planner: no peers");
  const std::size_t n = in.peers.size();
  for (std::size_t i = 0; i < n; ++i) {
    check_capacity(in.peers[i].compute_sps, i, "compute_sps");
    check_capacity(in.peers[i].download_bps, i, "download_bps");
    check_capacity(in.peers[i].upload_bps, i, "upload_bps");
  }
  if (!in.pair_caps.empty()) {
    if (in.pair_caps.size() != n) {
      throw std::invalid_argument("planner: pair_caps has " + std::to_string(in.pair_caps.size()) +
                                  " rows, expected " + std::to_string(n) + " (one per peer)");
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (in.pair_caps[i].size() != n) {
        throw std::invalid_argument("planner: pair_caps row " + std::to_string(i) + " has " +
                                    std::to_string(in.pair_caps[i].size()) + " entries, expected " +
                                    std::to_string(n));
      }
      for (std::size_t j = 0; j < n; ++j) {
        const double t = in.pair_caps[i][j];
        if (i != j && (std::isnan(t) || t < 0)) {
          throw std::invalid_argument("planner: pair_caps[" + std::to_string(i) + "][" +
                                      std::to_string(j) + "] must be >= 0 or +infinity (got " +
                                      number(t) + ")");
        }
      }
    }
  }
  if (!std::isfinite(in.gradient_bits) || in.gradient_bits <= 0) {
    throw std::invalid_argument("planner: gradient_bits must be a finite number > 0 (got " +
                                number(in.gradient_bits) + ")");
  }
  if (opt.objective == Objective::StepsPerSecond) {
    if (!std::isfinite(in.target_batch) || in.target_batch <= 0) {
      throw std::invalid_argument("planner: target_batch must be a finite number > 0 (got " +
                                  number(in.target_batch) + ")");
    }
  } else if (opt.roles == Roles::Optimize) {
    throw std::invalid_argument(
        "planner: Objective::AveragingOnly needs fixed roles (Roles::AllComputeCapable); with "
        "optimised roles the averaging rate alone is maximised by letting at most one peer "
        "compute");
  }
  if (opt.max_mip_nodes < 0) throw std::invalid_argument("planner: max_mip_nodes must be >= 0");
}

double compute_rate(const PlannerInput& in, const std::vector<bool>& computes) {
  double sum = 0;
  for (std::size_t i = 0; i < computes.size(); ++i) {
    if (computes[i]) sum += in.peers[i].compute_sps;
  }
  return sum / in.target_batch;
}

int count(const std::vector<bool>& v) {
  return static_cast<int>(std::count(v.begin(), v.end(), true));
}

// A plan for given roles: the averaging LP when at least two peers compute, closed forms otherwise.
struct Candidate {
  std::vector<bool> computes;
  detail::FlowResult flow;
  double averaging_rate = 0;
  double steps = 0;
};

Candidate evaluate(const PlannerInput& in, const PlannerOptions& opt,
                   const detail::ScaledProblem& p, std::vector<bool> computes,
                   bool balance = true) {
  Candidate c;
  c.computes = std::move(computes);
  const int k = count(c.computes);
  if (k == 0) {
    c.averaging_rate = 0;  // nothing is computed, so nothing is averaged
  } else if (k == 1) {
    c.averaging_rate = kInf;  // one gradient is its own average: no transfer at all
  } else {
    c.flow = detail::solve_fixed_roles(p, c.computes, balance);
    if (!c.flow.ok) throw std::runtime_error("planner: GLPK failed on the averaging LP");
    // Clean noise, then measure the rate on the plan itself rather than trusting ρ.
    double biggest = 0;
    for (const auto& row : c.flow.g) {
      for (double v : row) biggest = std::max(biggest, v);
    }
    for (auto& row : c.flow.g) {
      for (double& v : row) v = v < kNoise * biggest ? 0 : v;
    }
    for (double& v : c.flow.z) v = v < kNoise * biggest ? 0 : v;
    double worst = kInf;
    for (int i = 0; i < p.n; ++i) {
      if (!c.computes[i]) continue;
      double sum = 0;
      for (int j = 0; j < p.n; ++j) sum += c.flow.g[j][i];
      worst = std::min(worst, sum);
    }
    c.averaging_rate = worst * p.unit_bps / in.gradient_bits;
  }
  c.steps = opt.objective == Objective::StepsPerSecond
                ? std::min(compute_rate(in, c.computes), c.averaging_rate)
                : c.averaging_rate;
  return c;
}

Plan assemble(const detail::ScaledProblem& p, const Candidate& c, double gradient_bits) {
  const int n = p.n;
  Plan plan;
  plan.steps_per_s = c.steps;
  plan.averaging_rate = c.averaging_rate;
  plan.round_time_s = c.averaging_rate > 0 ? 1.0 / c.averaging_rate : kInf;
  plan.span_averaging_rate = c.averaging_rate;  // replaced below when two or more compute
  plan.peers.assign(n, PeerPlan{});
  plan.send_rate.assign(n, std::vector<double>(n, 0));
  plan.return_rate.assign(n, std::vector<double>(n, 0));
  plan.aggregation_rate.assign(n, 0);
  for (int i = 0; i < n; ++i) plan.peers[i].computes = c.computes[i];

  const int k = count(c.computes);
  if (k == 1) {
    // A lone computing peer "aggregates" its own vector locally, even in client mode: no
    // connection is involved.
    for (int i = 0; i < n; ++i) plan.peers[i].fraction = c.computes[i] ? 1.0 : 0.0;
    return plan;
  }
  if (k == 0) return plan;

  const double u = p.unit_bps;
  for (int j = 0; j < n; ++j) {
    plan.aggregation_rate[j] = c.flow.z[j] * u;
    for (int i = 0; i < n; ++i) {
      plan.return_rate[j][i] = c.flow.g[j][i] * u;
      // A computing sender streams part j to reducer j at exactly z_j (locally when i = j).
      if (c.computes[i] && p.can_reduce[j]) plan.send_rate[i][j] = c.flow.z[j] * u;
    }
  }
  // f_j = min_{i receiver} g_ji / Σ_k min_{i receiver} g_ki.
  std::vector<double> share(n, 0);
  double total = 0;
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    double least = kInf;
    for (int i = 0; i < n; ++i) {
      if (c.computes[i]) least = std::min(least, c.flow.g[j][i]);
    }
    share[j] = least;
    total += least;
  }
  plan.span_averaging_rate = total * p.unit_bps / gradient_bits;
  if (total > 0) {
    double kept = 0;
    for (int j = 0; j < n; ++j) {
      if (share[j] < kNoise * total) share[j] = 0;
      kept += share[j];
    }
    for (int j = 0; j < n; ++j) plan.peers[j].fraction = share[j] / kept;
  }
  return plan;
}

}  // namespace

namespace detail {

// Rates are expressed in units of the best min(d, u) among compute-capable peers (the largest
// averaging rate any plan can reach), so GLPK sees O(1) numbers whatever the input's magnitudes;
// capacities beyond what a plan can use are clamped (README.md: "Scaling").
ScaledProblem scale(const PlannerInput& in, const PlannerOptions& opt) {
  const int n = static_cast<int>(in.peers.size());
  double unit = 0;
  for (const auto& peer : in.peers) {
    if (peer.compute_sps > 0) unit = std::max(unit, std::min(peer.download_bps, peer.upload_bps));
  }
  if (!(unit > 0)) {  // no averaging possible; any unit will do, preferably a present one
    for (const auto& peer : in.peers) unit = std::max({unit, peer.download_bps, peer.upload_bps});
  }
  if (!(unit > 0)) unit = 1;
  const double clamp = 2.0 * n;

  ScaledProblem p;
  p.n = n;
  p.unit_bps = unit;
  p.compute_term = opt.objective == Objective::StepsPerSecond;
  for (const auto& peer : in.peers) {
    p.down.push_back(std::min(peer.download_bps / unit, clamp));
    p.up.push_back(std::min(peer.upload_bps / unit, clamp));
    p.kappa.push_back(
        p.compute_term ? std::min(peer.compute_sps * in.gradient_bits / in.target_batch / unit, 1.0)
                       : 0.0);
    p.can_compute.push_back(peer.compute_sps > 0);
    p.can_reduce.push_back(!peer.client_mode);
  }
  bool any_cap = false;
  for (int i = 0; i < static_cast<int>(in.pair_caps.size()); ++i) {
    for (int j = 0; j < n; ++j) any_cap = any_cap || (i != j && in.pair_caps[i][j] / unit < 2);
  }
  if (any_cap) {
    p.cap.assign(n, std::vector<double>(n, kInf));
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) {
        if (i != j && in.pair_caps[i][j] / unit < 2) p.cap[i][j] = in.pair_caps[i][j] / unit;
      }
    }
  }
  return p;
}

}  // namespace detail

Plan solve(const PlannerInput& input, const PlannerOptions& options) {
  validate(input, options);
  const detail::ScaledProblem p = detail::scale(input, options);
  const int n = p.n;

  if (options.roles == Roles::AllComputeCapable) {
    const Candidate all = evaluate(input, options, p, p.can_compute);
    Plan plan = assemble(p, all, input.gradient_bits);
    const int k = count(all.computes);
    plan.solver = k >= 2   ? "glpk simplex (LP, roles fixed: every compute-capable peer computes; "
                             "averaging rate maximised, then the fractions balanced)"
                  : k == 1 ? "closed form (roles fixed: one computing peer, nothing to average)"
                           : "nothing to plan (no peer can compute)";
    return plan;
  }

  const int capable = count(p.can_compute);
  if (capable <= 1) {
    const Candidate only = evaluate(input, options, p, p.can_compute);
    Plan plan = assemble(p, only, input.gradient_bits);
    plan.solver = capable == 1 ? "closed form (one compute-capable peer, nothing to average)"
                               : "nothing to plan (no peer can compute)";
    return plan;
  }

  // Every compute-capable peer computing is optimal whenever averaging keeps up with the whole
  // compute rate: no role choice can beat ξ = Σ s_i / B. One LP then settles the roles exactly.
  Candidate all = evaluate(input, options, p, p.can_compute);
  const double full_compute = compute_rate(input, p.can_compute);
  if (all.averaging_rate >= full_compute) {
    Plan plan = assemble(p, all, input.gradient_bits);
    plan.solver =
        "glpk simplex (LP): averaging keeps up with every compute-capable peer, so "
        "these roles are optimal without a MIP; averaging rate maximised, then the "
        "fractions balanced";
    return plan;
  }

  // Phase 1: the roles. The compact model (closed-form averaging rate, O(n) rows per MIP) is
  // solved first. It is exact for the full model when there are no pair caps and no reducer
  // uploads less than it downloads (README.md, "Compact model"); otherwise its roles are an
  // incumbent and the full O(n²) MIP searches only for strictly better plans.
  const std::int64_t nodes =
      options.max_mip_nodes > 0
          ? options.max_mip_nodes
          : std::clamp<std::int64_t>(400000 / (static_cast<std::int64_t>(n) * n), 50, 20000);
  detail::ScaledProblem uncapped = p;
  uncapped.cap.clear();
  const detail::RolesResult compact = detail::solve_roles_compact(uncapped, nodes);
  bool compact_is_exact = p.cap.empty();
  for (int i = 0; i < n; ++i)
    compact_is_exact = compact_is_exact && (!p.can_reduce[i] || p.down[i] <= p.up[i]);

  // Both programs assume two or more computing peers; one computing peer is worth s_k / B.
  std::vector<bool> single(n, false);
  int best = -1;
  for (int i = 0; i < n; ++i) {
    if (p.can_compute[i] &&
        (best < 0 || input.peers[i].compute_sps > input.peers[best].compute_sps)) {
      best = i;
    }
  }
  single[best] = true;

  // Candidates are compared on the final, measured ξ; ties go to the earlier one (more
  // computing peers first).
  std::vector<Candidate> candidates;
  candidates.push_back(std::move(all));
  if (!compact.computes.empty() && compact.computes != candidates[0].computes) {
    candidates.push_back(evaluate(input, options, p, compact.computes, /*balance=*/false));
  }
  candidates.push_back(evaluate(input, options, p, single));
  auto top = [&] {
    double t = 0;
    for (const auto& c : candidates) t = std::max(t, c.steps);
    return t;
  };

  std::string how = "glpk branch-and-cut on the compact roles model (" +
                    std::to_string(compact.mips) + " MIPs, " + std::to_string(compact.nodes) +
                    " nodes)";
  bool exact = compact_is_exact && compact.exact;
  if (!compact_is_exact) {
    const double cutoff = top() * input.gradient_bits / p.unit_bps * (1 + 1e-7);
    const detail::RolesResult full = detail::solve_roles_mip(p, nodes, cutoff);
    if (!full.computes.empty()) {
      candidates.insert(candidates.end() - 1,
                        evaluate(input, options, p, full.computes, /*balance=*/false));
    }
    exact = full.exact;
    how += " + glpk branch-and-cut on the full O(n^2) roles MIP above that incumbent (" +
           std::to_string(full.nodes) + " nodes)";
  }
  const double best_steps = top();
  std::size_t pick = 0;
  while (candidates[pick].steps < best_steps * (1 - kNoise)) ++pick;

  // Only the winner needs phase 3 (balanced fractions); "everyone computes" already has it.
  if (pick != 0) candidates[pick] = evaluate(input, options, p, candidates[pick].computes);
  Plan plan = assemble(p, candidates[pick], input.gradient_bits);
  plan.roles_exact = exact;
  how += exact ? ", exact" : ", node budget exhausted: best roles found, not proven optimal";
  const bool single_won = count(candidates[pick].computes) <= 1;
  plan.solver = how + (single_won ? "; one computing peer is fastest (nothing to average)"
                                  : "; then simplex with roles fixed (averaging rate maximised, "
                                    "then the fractions balanced)");
  return plan;
}

}  // namespace swarmlab::core::planner
