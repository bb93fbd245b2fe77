#include "core/planner/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
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

void check_capacity(double v, const std::string& where, const char* field) {
  if (!std::isfinite(v) || v < 0) {
    throw std::invalid_argument("planner: " + where + ": " + field + " must be a finite number >= 0 (got " + number(v) + ")");
  }
}

void validate(const PlannerInput& in, const PlannerOptions& opt) {
  if (in.peers.empty()) throw std::invalid_argument("planner: no peers");
  const std::size_t n = in.peers.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::string peer = "peer " + std::to_string(i);
    check_capacity(in.peers[i].compute_sps, peer, "compute_sps");
    check_capacity(in.peers[i].download_bps, peer, "download_bps");
    check_capacity(in.peers[i].upload_bps, peer, "upload_bps");
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
  for (std::size_t r = 0; r < in.relays.size(); ++r) {
    const std::string relay = "relays[" + std::to_string(r) + "]";
    check_capacity(in.relays[r].download_bps, relay, "download_bps");
    check_capacity(in.relays[r].upload_bps, relay, "upload_bps");
    if (in.relays[r].member && *in.relays[r].member >= n) {
      throw std::invalid_argument("planner: relays[" + std::to_string(r) + "].member is " +
                                  std::to_string(*in.relays[r].member) + ", expected a peer index < " +
                                  std::to_string(n));
    }
  }
  if (!in.routes.empty()) {
    if (in.routes.size() != n) {
      throw std::invalid_argument("planner: routes has " + std::to_string(in.routes.size()) +
                                  " rows, expected " + std::to_string(n) + " (one per peer)");
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (in.routes[i].size() != n) {
        throw std::invalid_argument("planner: routes row " + std::to_string(i) + " has " +
                                    std::to_string(in.routes[i].size()) + " entries, expected " + std::to_string(n));
      }
      for (std::size_t j = 0; j < n; ++j) {
        const int r = in.routes[i][j];
        if (i != j && r != kDirect && r != kUnreachable && (r < 0 || static_cast<std::size_t>(r) >= in.relays.size())) {
          throw std::invalid_argument("planner: routes[" + std::to_string(i) + "][" + std::to_string(j) + "] is " +
                                      std::to_string(r) + ", expected kDirect, kUnreachable or a relay index < " +
                                      std::to_string(in.relays.size()));
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
  if (opt.max_mips < 0) throw std::invalid_argument("planner: max_mips must be >= 0");
  if (!(opt.max_gap >= 0) || !std::isfinite(opt.max_gap)) {
    throw std::invalid_argument("planner: max_gap must be a finite number >= 0 (got " +
                                number(opt.max_gap) + ")");
  }
}

double compute_rate(const PlannerInput& in, const std::vector<bool>& computes) {
  double sum = 0;
  for (std::size_t i = 0; i < computes.size(); ++i) {
    if (computes[i]) sum += in.peers[i].compute_sps;
  }
  return sum / in.target_batch;
}


// The rate (gradients/s) at which a butterfly round with fractions f runs when every transfer is
// as fast as the tightest capacity allows: per unit of rate, a computing peer uploads its parts of
// the other spans (1 − f_i of P) and a reducer returns its span to the other computing peers
// ((m − c_i)·f_i of P); downloads mirror uploads; pair x → y carries [x computes]·f_y + [y
// computes]·f_x. Computed on the input's own numbers, so it is what the links really allow.
double split_rate(const PlannerInput& in, const std::vector<bool>& computes,
                  const std::vector<double>& f) {
  const std::size_t n = in.peers.size();
  const int m = detail::count_set(computes);
  double rate = kInf;
  for (std::size_t i = 0; i < n; ++i) {
    const double own = f[i] * (m - (computes[i] ? 1 : 0));
    const double load = (computes[i] ? 1 - f[i] : 0) + own;  // the same up and down
    if (!(load > 0)) continue;
    const double per_gradient = load * in.gradient_bits;
    rate = std::min({rate, in.peers[i].upload_bps / per_gradient,
                     in.peers[i].download_bps / per_gradient});
  }
  if (!in.pair_caps.empty()) {
    for (std::size_t x = 0; x < n; ++x) {
      for (std::size_t y = 0; y < n; ++y) {
        if (x == y || !std::isfinite(in.pair_caps[x][y])) continue;
        const double load = (computes[x] ? f[y] : 0) + (computes[y] ? f[x] : 0);
        if (load > 0) rate = std::min(rate, in.pair_caps[x][y] / (load * in.gradient_bits));
      }
    }
  }
  // A relay carries what it forwards, and, when it is a peer of the round, its own share too.
  const std::vector<double> relayed = relay_loads(in, computes, f);
  for (std::size_t r = 0; r < relayed.size(); ++r) {
    if (!(relayed[r] > 0)) continue;
    const RelayLink& relay = in.relays[r];
    double own = 0;
    if (relay.member) {
      const std::size_t k = *relay.member;
      own = (computes[k] ? 1 - f[k] : 0) + f[k] * (m - (computes[k] ? 1 : 0));
    }
    const double per_gradient = (own + relayed[r]) * in.gradient_bits;
    rate = std::min({rate, relay.upload_bps / per_gradient, relay.download_bps / per_gradient});
  }
  return rate;
}

// The plan for given roles. `known_rate` is their averaging LP's ρ (scaled) when already known,
// negative otherwise; `known_split` their best split, when already solved.
Plan assemble(const PlannerInput& in, const PlannerOptions& opt, const detail::ScaledProblem& p,
              const std::vector<bool>& computes, double known_rate = -1,
              const detail::SplitResult* known_split = nullptr) {
  const int n = p.n;
  Plan plan;
  plan.peers.assign(n, PeerPlan{});
  plan.send_rate.assign(n, std::vector<double>(n, 0));
  plan.return_rate.assign(n, std::vector<double>(n, 0));
  plan.aggregation_rate.assign(n, 0);
  for (int i = 0; i < n; ++i) plan.peers[i].computes = computes[i];
  const int k = detail::count_set(computes);
  const bool steps = opt.objective == Objective::StepsPerSecond;
  const double compute = steps ? compute_rate(in, computes) : kInf;

  if (k == 0) {  // nothing is computed, so nothing is averaged
    plan.round_time_s = kInf;
  } else if (k == 1) {
    // One gradient is its own average: no transfer at all. A lone computing peer "aggregates"
    // its own vector locally, even in client mode (README.md, "One computing peer").
    plan.averaging_rate = plan.span_averaging_rate = kInf;
    plan.round_time_s = 0;
    for (int i = 0; i < n; ++i) plan.peers[i].fraction = computes[i] ? 1.0 : 0.0;
  } else {
    double rate = known_rate;
    if (rate < 0) {
      const detail::RateResult r = detail::averaging_lp(p, computes);
      if (!r.ok) throw std::runtime_error("planner: GLPK failed on the averaging LP");
      rate = r.certified ? r.rho : detail::reference_averaging_lp(p, computes).rho;
    }
    plan.averaging_rate = rate * p.unit_bps / in.gradient_bits;

    // Fractions: the best split real links carry, with solver dust removed, then checked against
    // every capacity on the input's own numbers.
    const detail::SplitResult split = known_split ? *known_split : detail::best_split(p, computes);
    if (!split.ok) throw std::runtime_error("planner: GLPK failed on the split LP");
    std::vector<double> f(n, 0);
    double kept = 0;
    for (int j = 0; j < n; ++j) {
      if (split.w[j] >= kNoise * split.total) kept += split.w[j];
    }
    if (kept > 0) {
      for (int j = 0; j < n; ++j) f[j] = split.w[j] >= kNoise * split.total ? split.w[j] / kept : 0;
      const double achievable = split_rate(in, computes, f);
      plan.span_averaging_rate = std::min(achievable, plan.averaging_rate);
      const double span_bps = plan.span_averaging_rate * in.gradient_bits;
      for (int j = 0; j < n; ++j) {
        plan.peers[j].fraction = f[j];
        if (f[j] == 0) continue;
        plan.aggregation_rate[j] = span_bps * f[j];
        for (int i = 0; i < n; ++i) {
          if (!computes[i]) continue;
          plan.send_rate[i][j] = span_bps * f[j];
          plan.return_rate[j][i] = span_bps * f[j];
        }
      }
    }
    plan.round_time_s =
        plan.span_averaging_rate > 0 ? 1.0 / plan.span_averaging_rate : kInf;
  }
  if (k == 0) {
    plan.steps_per_s = plan.achievable_steps_per_s = 0;
  } else {
    plan.steps_per_s = std::min(compute, plan.averaging_rate);
    plan.achievable_steps_per_s = std::min(compute, plan.span_averaging_rate);
  }
  plan.steps_per_s_bound = plan.steps_per_s;
  return plan;
}

std::string describe_split(const Plan& plan) {
  if (!(plan.span_averaging_rate < plan.averaging_rate * (1 - 1e-9))) return "";
  return "; the LP returns some spans to some receivers only: the best real split reaches " +
         number(plan.span_averaging_rate / plan.averaging_rate) + " of its rate";
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
  }
  for (int i = 0; i < n; ++i) p.can_reduce.push_back(can_aggregate(in, i));
  p.routes = in.routes;
  for (const RelayLink& relay : in.relays) {
    p.relay_both.push_back(std::min({relay.download_bps / unit, relay.upload_bps / unit, clamp}));
    p.relay_member.push_back(relay.member ? static_cast<int>(*relay.member) : -1);
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
        if (i != j && !(p.cap[i][j] > 0)) p.closed_pairs.emplace_back(i, j);
      }
    }
  }
  return p;
}

}  // namespace detail

bool can_aggregate(const PlannerInput& input, std::size_t i) {
  if (!input.peers.at(i).client_mode) return true;
  if (input.routes.empty()) return false;
  for (std::size_t j = 0; j < input.peers.size(); ++j) {
    if (j == i || !(input.peers[j].compute_sps > 0)) continue;
    if (input.routes[i][j] == kUnreachable || input.routes[j][i] == kUnreachable) return false;
  }
  return true;
}

std::vector<double> relay_loads(const PlannerInput& input, const std::vector<bool>& computes, const std::vector<double>& f) {
  std::vector<double> load(input.relays.size(), 0.0);
  for (std::size_t x = 0; x < input.routes.size(); ++x) {
    for (std::size_t y = 0; y < input.routes.size(); ++y) {
      const int r = input.routes[x][y];
      if (x == y || r < 0) continue;
      load[r] += (computes[x] ? f[y] : 0) + (computes[y] ? f[x] : 0);
    }
  }
  return load;
}

namespace {

// solve() with a warm start of the LPs from `start` (a previous plan's final bases, re-indexed to
// this input), and this plan's final bases written to `finish` (empty when no roles search
// decided it).
Plan solve_from(const PlannerInput& input, const PlannerOptions& options,
                const std::vector<bool>& previous_roles, const detail::PlanBases* start,
                detail::PlanBases* finish) {
  validate(input, options);
  if (!previous_roles.empty() && previous_roles.size() != input.peers.size()) {
    throw std::invalid_argument("planner: previous_roles has " +
                                std::to_string(previous_roles.size()) +
                                " entries, expected 0 or " + std::to_string(input.peers.size()) +
                                " (one per peer)");
  }
  const detail::ScaledProblem p = detail::scale(input, options);
  const int n = p.n;

  if (options.roles == Roles::AllComputeCapable) {
    Plan plan = assemble(input, options, p, p.can_compute);
    const int k = detail::count_set(p.can_compute);
    plan.solver = k >= 2   ? "averaging LP (aggregated form, glpk simplex; roles fixed: every "
                             "compute-capable peer computes); fractions from the best split"
                  : k == 1 ? "closed form (roles fixed: one computing peer, nothing to average)"
                           : "nothing to plan (no peer can compute)";
    plan.solver += describe_split(plan);
    return plan;
  }

  const int capable = detail::count_set(p.can_compute);
  if (capable <= 1) {
    Plan plan = assemble(input, options, p, p.can_compute);
    plan.solver = capable == 1 ? "closed form (one compute-capable peer, nothing to average)"
                               : "nothing to plan (no peer can compute)";
    return plan;
  }

  const double to_steps = p.unit_bps / input.gradient_bits;

  // Phase 1: the roles (README.md, "The roles search"), for two or more computing peers.
  detail::RolesSearchLimits limits;
  limits.max_mip_nodes = options.max_mip_nodes;
  limits.max_mips = options.max_mips;
  limits.gap = options.max_gap;
  detail::RolesResult roles =
      detail::search_roles(p, limits, previous_roles, start, finish != nullptr);

  // One computing peer needs no averaging: worth s_k / B.
  int best = -1;
  for (int i = 0; i < n; ++i) {
    if (p.can_compute[i] &&
        (best < 0 || input.peers[i].compute_sps > input.peers[best].compute_sps)) {
      best = i;
    }
  }
  const double single = input.peers[best].compute_sps / input.target_batch;
  if (finish) *finish = std::move(roles.bases);
  if (roles.everyone) {
    // Averaging keeps up with every compute-capable peer: no role choice beats ξ = Σ s_i / B.
    Plan plan = assemble(input, options, p, roles.computes, roles.rate, &roles.split);
    plan.solver =
        "averaging LP (aggregated form, glpk simplex): averaging keeps up with every "
        "compute-capable peer, so these roles are optimal without a roles search; fractions "
        "from the best split" + describe_split(plan);
    return plan;
  }
  std::vector<bool> pick = roles.computes;
  double rate = roles.rate;
  const detail::SplitResult* split = &roles.split;
  if (pick.empty() || roles.value * to_steps < single) {
    pick.assign(n, false);
    pick[best] = true;
    rate = -1;
    split = nullptr;
    if (finish) *finish = {};
  }
  Plan plan = assemble(input, options, p, pick, rate, split);
  plan.steps_per_s_bound = std::max({plan.steps_per_s, single, roles.bound * to_steps});
  plan.roles_exact = roles.exact;
  plan.roles_gap = roles.exact ? 0 : plan.steps_per_s_bound / plan.steps_per_s - 1;
  if (plan.roles_exact) plan.steps_per_s_bound = plan.steps_per_s;

  std::string how = "roles: incumbent from " +
                    std::string(roles.warm ? "the previous roles" : "nested bandwidth thresholds") +
                    " (" + std::to_string(roles.evaluations) + " averaging LPs), then ";
  if (roles.enumerated > 0) how += std::to_string(roles.enumerated) + " cases tested role set by role set and ";
  how += std::to_string(roles.mips) + " glpk branch-and-cut MIPs on the aggregated " +
                    "roles model (" + std::to_string(roles.nodes) + " nodes";
  if (roles.region_splits > 0) {
    how += "; " + std::to_string(roles.region_splits) + " cases of two regions split by region count";
  }
  how += ")";
  how += roles.exact ? ", proven optimal"
                     : ", proven within " + number(100 * plan.roles_gap) + "% of optimal" +
                           // max_gap stops the search at that gap; a larger one is the budget's
                           (options.max_gap > 0 && plan.roles_gap <= options.max_gap * (1 + 1e-6)
                                ? " (max_gap)"
                                : " (budget spent)");
  how += detail::count_set(pick) <= 1 ? "; one computing peer is fastest (nothing to average)"
                          : "; then the averaging LP with roles fixed and the best split";
  plan.solver = how + describe_split(plan);
  return plan;
}

}  // namespace

Plan solve(const PlannerInput& input, const PlannerOptions& options) {
  return solve(input, options, {});
}

Plan solve(const PlannerInput& input, const PlannerOptions& options,
           const std::vector<bool>& previous_roles) {
  return solve_from(input, options, previous_roles, nullptr, nullptr);
}

Plan Planner::solve(const PlannerInput& input, const std::vector<std::uint64_t>& keys) {
  if (keys.size() != input.peers.size()) {
    throw std::invalid_argument("planner: keys has " + std::to_string(keys.size()) +
                                " entries, expected " + std::to_string(input.peers.size()) +
                                " (one per peer)");
  }
  std::map<std::uint64_t, int> index;  // key → peer index in `input`
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!index.emplace(keys[i], static_cast<int>(i)).second) {
      throw std::invalid_argument("planner: keys[" + std::to_string(i) + "] repeats an earlier key");
    }
  }
  // The last plan's roles and LP bases, its peers renumbered from the last keys to these.
  std::vector<bool> hint;
  std::optional<detail::PlanBases> start;
  if (last_) {
    hint.assign(keys.size(), false);
    std::vector<int> to(last_keys_.size(), -1);
    for (std::size_t i = 0; i < last_keys_.size(); ++i) {
      const auto it = index.find(last_keys_[i]);
      if (it == index.end()) continue;
      to[i] = it->second;
      hint[it->second] = last_->peers[i].computes;
    }
    if (bases_) start = detail::reindexed(*bases_, to);
  }
  auto finish = std::make_shared<detail::PlanBases>();
  Plan plan = solve_from(input, options_, hint, start ? &*start : nullptr, finish.get());
  bases_ = finish->averaging.status.empty() ? nullptr : std::move(finish);
  last_keys_ = keys;
  last_ = plan;
  return plan;
}

void Planner::reset() {
  bases_.reset();
  last_keys_.clear();
  last_.reset();
}

}  // namespace swarmlab::core::planner
