// Phase 1 without pair caps: choosing the computing peers on the compact (closed-form) model.
#include <algorithm>
#include <functional>
#include <numeric>

#include "core/planner/glpk_model.h"
#include "core/planner/lp_model.h"

namespace swarmlab::core::planner::detail {

double consistent_rate(const ScaledProblem& p, const std::vector<bool>& computes) {
  int m = 0, q = 0;
  double beta = kInf, computing_reducers = 0, other_reducers = 0;
  for (int i = 0; i < p.n; ++i) {
    const double b = p.both(i);
    if (computes[i]) {
      ++m;
      beta = std::min(beta, b);
      if (p.can_reduce[i]) {
        ++q;
        computing_reducers += b;
      }
    } else if (p.can_reduce[i]) {
      other_reducers += b;
    }
  }
  if (m <= 1) return kInf;
  if (m == 2) return q >= 1 ? beta : std::min(beta, other_reducers / 2);
  const double md = m;
  return std::min(beta, (computing_reducers + (md - 2) / md * other_reducers) / (md - 2 + q));
}

namespace {

// ξ·P/unit for given roles on the compact model: min(compute term, averaging rate).
double value(const ScaledProblem& p, const std::vector<bool>& computes) {
  double compute = 0;
  for (int i = 0; i < p.n; ++i) compute += computes[i] ? p.kappa[i] : 0;
  return std::min(compute, consistent_rate(p, computes));
}

// Cheap upper bound on the value of any plan with exactly m computing peers: the m largest κ;
// the m-th largest b (the slowest computing peer bounds ρ); and the closed form's second term at
// its best for each possible number q of computing reducers (it grows with Σ b over them).
double bound_for(int m, const std::vector<double>& kappa_desc, const std::vector<double>& b_desc,
                 const std::vector<double>& reducer_b_desc, int clients, double all_reducers_b) {
  double ub = std::accumulate(kappa_desc.begin(), kappa_desc.begin() + m, 0.0);
  ub = std::min(ub, b_desc[m - 1]);
  if (m >= 3) {
    const int q_max = std::min<int>(m, static_cast<int>(reducer_b_desc.size()));
    const int q_min = std::max(0, m - clients);
    const double md = m;
    double best = 0, top = 0;
    for (int q = 0; q <= q_max; ++q) {
      if (q > 0) top += reducer_b_desc[q - 1];
      if (q < q_min) continue;
      // (Σ_CZ b + (m−2)/m (B_Z − Σ_CZ b)) / (m−2+q) = ((m−2)/m B_Z + 2/m Σ_CZ b) / (m−2+q)
      best = std::max(best, ((md - 2) / md * all_reducers_b + 2 / md * top) / (md - 2 + q));
    }
    ub = std::min(ub, best);
  }
  return ub;
}

// The compact program for exactly m computing peers (m >= 2), searching only for values >= cut.
// Per compute-capable reducer i: a span y_i if it computes ((m−2)·y_i + S <= b_i), a span x_i if
// it does not (m·x_i <= b_i); per compute-capable client: S <= b_i if it computes; peers that
// cannot compute aggregate b_j/m each. S <= Σ spans, S <= Σ κ c, Σ c = m.
struct CompactSolve {
  bool found = false;
  std::vector<bool> computes;
  MipOutcome outcome;
};

CompactSolve solve_for_m(const ScaledProblem& p, int m, double cut, std::int64_t max_nodes) {
  const int n = p.n;
  const double md = m;
  Model model;
  const int s = model.col(std::min(cut, 1.0), 1.0, 1.0);
  std::vector<int> c(n, 0), y(n, 0), x(n, 0);
  double fixed_spans = 0;
  for (int i = 0; i < n; ++i) {
    if (p.can_compute[i]) {
      c[i] = model.col(0, 1, 0, true);
      if (p.can_reduce[i]) {
        const double y_ub = m > 2 ? std::min(1.0, p.both(i) / (md - 2)) : 1.0;
        y[i] = model.col(0, y_ub);
        x[i] = model.col(0, p.both(i) / md);
      }
    } else if (p.can_reduce[i]) {
      fixed_spans += p.both(i) / md;
    }
  }
  const int count = model.row_eq(m);
  const int compute = model.row_le(0);
  model.coef(compute, s, 1);
  const int spans = model.row_le(fixed_spans);
  model.coef(spans, s, 1);
  for (int i = 0; i < n; ++i) {
    if (!c[i]) continue;
    model.coef(count, c[i], 1);
    model.coef(compute, c[i], -p.kappa[i]);
    const double b = p.both(i);
    if (y[i]) {
      model.coef(spans, y[i], -1);
      model.coef(spans, x[i], -1);
      // c_i = 1: S + (m−2)·y_i <= b_i;  c_i = 0: S <= 1 (y_i = 0 below). b_i <= 1 here.
      const int r = model.row_le(1);
      model.coef(r, s, 1);
      model.coef(r, y[i], md - 2);
      model.coef(r, c[i], 1 - b);
      const int ry = model.row_le(0);  // y_i only when computing
      model.coef(ry, y[i], 1);
      model.coef(ry, c[i], -(m > 2 ? std::min(1.0, b / (md - 2)) : 1.0));
      const int rx = model.row_le(b / md);  // x_i only when not computing
      model.coef(rx, x[i], 1);
      model.coef(rx, c[i], b / md);
    } else if (b < 1) {  // a computing client uploads its gradient and downloads the average
      const int r = model.row_le(1);
      model.coef(r, s, 1);
      model.coef(r, c[i], 1 - b);
    }
  }
  // Symmetry breaking: among interchangeable peers, earlier ones compute first.
  std::vector<int> last_of_class;
  for (int i = 0; i < n; ++i) {
    if (!c[i]) continue;
    bool placed = false;
    for (int& last : last_of_class) {
      if (p.kappa[last] == p.kappa[i] && p.both(last) == p.both(i) &&
          p.can_reduce[last] == p.can_reduce[i]) {
        const int r = model.row_ge(0);
        model.coef(r, c[last], 1);
        model.coef(r, c[i], -1);
        last = i;
        placed = true;
        break;
      }
    }
    if (!placed) last_of_class.push_back(i);
  }

  glp_prob* lp = model.load();
  glp_scale_prob(lp, GLP_SF_AUTO);
  CompactSolve out;
  out.outcome = run_mip(lp, max_nodes);
  if (!out.outcome.solved) return out;
  out.found = true;
  out.computes.assign(n, false);
  for (int i = 0; i < n; ++i) {
    if (c[i]) out.computes[i] = glp_mip_col_val(lp, c[i]) > 0.5;
  }
  return out;
}

}  // namespace

RolesResult solve_roles_compact(const ScaledProblem& p, std::int64_t max_nodes) {
  TermOff quiet;
  const int n = p.n;
  std::vector<int> capable;
  for (int i = 0; i < n; ++i) {
    if (p.can_compute[i]) capable.push_back(i);
  }
  const int k = static_cast<int>(capable.size());
  RolesResult res;
  res.exact = true;
  if (k < 2) return res;

  // Incumbent: remove, one at a time, the peer whose removal helps most (O(n³) closed forms).
  std::vector<bool> current = p.can_compute;
  res.computes = current;
  res.rho = value(p, current);
  for (int left = k; left > 2; --left) {
    int drop = -1;
    double drop_value = -1;
    for (int i : capable) {
      if (!current[i]) continue;
      current[i] = false;
      const double v = value(p, current);
      current[i] = true;
      if (v > drop_value) {
        drop_value = v;
        drop = i;
      }
    }
    current[drop] = false;
    if (drop_value > res.rho) {
      res.rho = drop_value;
      res.computes = current;
    }
  }

  // Exactness: every m whose bound beats the incumbent gets a MIP that only accepts better plans.
  std::vector<double> kappa_desc, b_desc, reducer_b_desc;
  int clients = 0;
  double all_reducers_b = 0;
  for (int i = 0; i < n; ++i) {
    if (p.can_reduce[i]) all_reducers_b += p.both(i);
    if (!p.can_compute[i]) continue;
    kappa_desc.push_back(p.kappa[i]);
    b_desc.push_back(p.both(i));
    if (p.can_reduce[i]) {
      reducer_b_desc.push_back(p.both(i));
    } else {
      ++clients;
    }
  }
  for (auto* v : {&kappa_desc, &b_desc, &reducer_b_desc})
    std::sort(v->begin(), v->end(), std::greater<>());

  constexpr double kBetter = 1 + 1e-7;  // improvements smaller than this are solver noise
  for (int m = k; m >= 2; --m) {
    if (bound_for(m, kappa_desc, b_desc, reducer_b_desc, clients, all_reducers_b) <=
        res.rho * kBetter) {
      continue;
    }
    const CompactSolve got = solve_for_m(p, m, res.rho * kBetter, max_nodes);
    res.nodes += got.outcome.nodes;
    ++res.mips;
    res.exact = res.exact && got.outcome.optimal;
    if (!got.found) continue;
    const double v = value(p, got.computes);
    if (v > res.rho) {
      res.rho = v;
      res.computes = got.computes;
    }
  }
  return res;
}

}  // namespace swarmlab::core::planner::detail
