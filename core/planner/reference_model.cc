// The literal O(n²) programs of docs/dedloc.md §2: slow, kept as an independent reference.
#include "core/planner/lp_model.h"

#include <algorithm>
#include <stdexcept>

#include "core/planner/glpk_model.h"

namespace swarmlab::core::planner::detail {

namespace {

// Upper bound on the aggregation rate z_j of reducer j in a plan where at least two peers
// compute: z_j <= ρ <= 1 (aggregating faster than anyone needs is useless) and some computing
// k ≠ j sends to j at >= z_j, so z_j <= min(u_k, t_kj, d_j) for that k.
double roles_z_bound(const ScaledProblem& p, int j) {
  double best = 0;
  for (int k = 0; k < p.n; ++k) {
    if (k == j || !p.can_compute[k]) continue;
    best = std::max(best, std::min(p.up[k], p.pair_cap(k, j)));
  }
  return std::min({best, p.down[j], 1.0});
}

// The roles program (docs/dedloc.md §2, O(n²) form). Columns: ρ, then per peer c and z, then a and g
// in (sender, receiver) order. ρ is ξ·P in rate units.
struct RolesModel {
  int rho = 0;
  std::vector<int> c;  // 0 where the peer cannot compute
};

RolesModel build_roles_model(const ScaledProblem& p, Model& m, bool binary, double cutoff) {
  const int n = p.n;
  RolesModel rm;
  rm.c.assign(n, 0);
  std::vector<int> z(n, 0);
  std::vector<double> zub(n, 0);
  std::vector<std::vector<int>> a(n, std::vector<int>(n, 0)), g(n, std::vector<int>(n, 0));
  for (int i = 0; i < n; ++i) {
    if (p.can_reduce[i]) zub[i] = roles_z_bound(p, i);
  }

  rm.rho = m.col(std::min(cutoff, 1.0), 1.0, 1.0);
  for (int i = 0; i < n; ++i) {
    if (p.can_compute[i]) rm.c[i] = m.col(0, 1, 0, binary);
    if (p.can_reduce[i]) z[i] = m.col(0, zub[i]);
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      // a_ij: i streams the parts of reducer j's span to j; faster than z_j is never useful.
      if (i != j && p.can_compute[i] && p.can_reduce[j]) {
        a[i][j] = m.col(0, std::min({p.up[i], p.down[j], p.pair_cap(i, j), zub[j]}));
      }
    }
  }
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    for (int i = 0; i < n; ++i) {
      if (!p.can_compute[i]) continue;  // only computing peers need the average
      const double ub = i == j ? zub[j] : std::min({p.up[j], p.down[i], p.pair_cap(j, i), zub[j]});
      g[j][i] = m.col(0, ub);
    }
  }

  // z_j <= a_kj + (1 − c_k)·zub_j for every possible sender k ≠ j: a computing sender bounds
  // the aggregation rate, a non-computing one does not.
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    for (int k = 0; k < n; ++k) {
      if (k == j || !p.can_compute[k]) continue;
      const int r = m.row_le(zub[j]);
      m.coef(r, z[j], 1);
      m.coef(r, a[k][j], -1);
      m.coef(r, rm.c[k], zub[j]);
    }
  }
  // g_ji <= z_j: a reducer returns no faster than it aggregates.
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      if (!g[j][i]) continue;
      const int r = m.row_le(0);
      m.coef(r, g[j][i], 1);
      m.coef(r, z[j], -1);
    }
  }
  // Bandwidth: transfers to and from oneself are free.
  for (int i = 0; i < n; ++i) {
    const int rd = m.row_le(p.down[i]);
    const int ru = m.row_le(p.up[i]);
    for (int k = 0; k < n; ++k) {
      if (k == i) continue;
      if (a[k][i]) m.coef(rd, a[k][i], 1);
      if (g[k][i]) m.coef(rd, g[k][i], 1);
      if (a[i][k]) m.coef(ru, a[i][k], 1);
      if (g[i][k]) m.coef(ru, g[i][k], 1);
    }
  }
  // Pairwise caps where a single column bound does not already express them.
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i == j || !a[i][j] || !g[i][j]) continue;
      const double t = p.pair_cap(i, j);
      if (t == kInf) continue;
      const int r = m.row_le(t);
      m.coef(r, a[i][j], 1);
      m.coef(r, g[i][j], 1);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!p.can_compute[i]) continue;
    // Receiver: ρ <= Σ_j g_ji when i computes (ρ <= 1 always holds).
    const int r = m.row_le(1);
    m.coef(r, rm.rho, 1);
    for (int j = 0; j < n; ++j) {
      if (g[j][i]) m.coef(r, g[j][i], -1);
    }
    m.coef(r, rm.c[i], 1);
    // Implied, but tightens the relaxation: a computing peer uploads and downloads at least ρ,
    // so ρ <= min(d_i, u_i) when c_i = 1.
    if (p.both(i) < 1) {
      const int rb = m.row_le(1);
      m.coef(rb, rm.rho, 1);
      m.coef(rb, rm.c[i], 1 - p.both(i));
    }
  }
  // Compute term: ρ <= Σ κ_k c_k  (ξ <= Σ s_k c_k / B).
  if (p.compute_term) {
    const int r = m.row_le(0);
    m.coef(r, rm.rho, 1);
    for (int k = 0; k < n; ++k) {
      if (rm.c[k]) m.coef(r, rm.c[k], -p.kappa[k]);
    }
  }
  // At least two computing peers: the bounds above assume it; one computing peer is a closed
  // form the caller handles.
  {
    const int r = m.row_ge(2);
    for (int k = 0; k < n; ++k) {
      if (rm.c[k]) m.coef(r, rm.c[k], 1);
    }
  }
  add_symmetry_breaking(p, rm.c, m);
  return rm;
}

}  // namespace

ReferenceRoles reference_roles_mip(const ScaledProblem& p, std::int64_t max_nodes, double cutoff) {
  TermOff quiet;
  ReferenceRoles res;
  if (cutoff > 1) {  // ρ <= 1 whenever two or more peers compute
    res.exact = true;
    return res;
  }
  // A computing peer uploads and downloads at least ρ, so peers with min(d, u) below the cutoff
  // cannot compute in any plan worth finding: they stay in the model as reducers only.
  ScaledProblem q = p;
  int candidates = 0;
  for (int i = 0; i < q.n; ++i) {
    if (q.can_compute[i] && q.both(i) < cutoff) q.can_compute[i] = false;
    candidates += q.can_compute[i] ? 1 : 0;
  }
  if (candidates < 2) {
    res.exact = true;
    return res;
  }
  Model m;
  const RolesModel rm = build_roles_model(q, m, /*binary=*/true, cutoff);
  glp_prob* lp = m.load();
  glp_scale_prob(lp, GLP_SF_AUTO);
  const MipOutcome out = run_mip(lp, max_nodes);
  res.nodes = out.nodes;
  res.exact = out.optimal;
  if (!out.solved) return res;
  res.rho = glp_mip_col_val(lp, rm.rho);
  res.computes.assign(p.n, false);
  for (int i = 0; i < p.n; ++i) {
    if (rm.c[i]) res.computes[i] = glp_mip_col_val(lp, rm.c[i]) > 0.5;
  }
  return res;
}

std::vector<double> reference_roles_relaxation(const ScaledProblem& p) {
  TermOff quiet;
  Model m;
  const RolesModel rm = build_roles_model(p, m, /*binary=*/false, 0.0);
  glp_prob* lp = m.load();
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_adv_basis(lp, 0);
  const glp_smcp parm = simplex_params(lp);
  if (glp_simplex(lp, &parm) != 0 || glp_get_status(lp) != GLP_OPT) {
    throw std::runtime_error("planner: LP relaxation failed");
  }
  std::vector<double> c(p.n, 0);
  for (int i = 0; i < p.n; ++i) {
    if (rm.c[i]) c[i] = glp_get_col_prim(lp, rm.c[i]);
  }
  return c;
}

// With the roles fixed, a computing k sends to reducer j at exactly z_j (more is wasted upload,
// less is infeasible), so a_kj is replaced by z_j and the model keeps only z, g and ρ.
FlowResult reference_averaging_lp(const ScaledProblem& p, const std::vector<bool>& computes) {
  TermOff quiet;
  const int n = p.n;
  FlowResult res;
  res.z.assign(n, 0);
  res.g.assign(n, std::vector<double>(n, 0));

  // Rescale so that the smallest min(d_i, u_i) of a computing peer, which bounds ρ, is 1; then
  // clamp what can no longer bind (a peer never needs more than 2n, a pair more than 2).
  const double beta = slowest_computing_link(p, computes);
  const int senders = count_set(computes);
  if (!(beta > 0)) {  // a computing peer cannot send or receive at all: nothing is averaged
    res.ok = true;
    return res;
  }
  const double clamp = 2.0 * n;
  std::vector<double> down(n), up(n);
  for (int i = 0; i < n; ++i) {
    down[i] = std::min(p.down[i] / beta, clamp);
    up[i] = std::min(p.up[i] / beta, clamp);
  }
  auto cap = [&](int i, int j) { return std::min(p.pair_cap(i, j) / beta, 2.0); };

  Model m;
  std::vector<int> z(n, 0);
  std::vector<double> zub(n, 0);
  std::vector<std::vector<int>> g(n, std::vector<int>(n, 0));
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    const int others = senders - (computes[j] ? 1 : 0);
    double ub = std::min(1.0, down[j] / others);
    for (int k = 0; k < n; ++k) {
      if (k != j && computes[k]) ub = std::min({ub, up[k], cap(k, j)});
    }
    zub[j] = ub;
  }
  const int rho = m.col(0, 1.0, 1.0);
  for (int j = 0; j < n; ++j) {
    if (p.can_reduce[j]) z[j] = m.col(0, zub[j]);
  }
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    for (int i = 0; i < n; ++i) {
      if (!computes[i]) continue;
      const double ub = i == j ? zub[j] : std::min({up[j], down[i], cap(j, i), zub[j]});
      g[j][i] = m.col(0, ub);
    }
  }
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      if (!g[j][i]) continue;
      const int r = m.row_le(0);
      m.coef(r, g[j][i], 1);
      m.coef(r, z[j], -1);
    }
  }
  for (int i = 0; i < n; ++i) {
    const int rd = m.row_le(down[i]);
    const int ru = m.row_le(up[i]);
    if (z[i]) m.coef(rd, z[i], senders - (computes[i] ? 1 : 0));
    for (int k = 0; k < n; ++k) {
      if (k == i) continue;
      if (g[k][i]) m.coef(rd, g[k][i], 1);
      if (computes[i] && z[k]) m.coef(ru, z[k], 1);
      if (g[i][k]) m.coef(ru, g[i][k], 1);
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      // a_ij + g_ij <= t_ij where a_ij = z_j; a lone term is already a column bound.
      if (i == j || !(computes[i] && z[j]) || !g[i][j]) continue;
      const double t = cap(i, j);
      if (t >= 2) continue;
      const int r = m.row_le(t);
      m.coef(r, z[j], 1);
      m.coef(r, g[i][j], 1);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (!computes[i]) continue;
    const int r = m.row_le(0);
    m.coef(r, rho, 1);
    for (int j = 0; j < n; ++j) {
      if (g[j][i]) m.coef(r, g[j][i], -1);
    }
  }

  glp_prob* lp = m.load();
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_adv_basis(lp, 0);
  const glp_smcp parm = simplex_params(lp);
  if (glp_simplex(lp, &parm) != 0 || glp_get_status(lp) != GLP_OPT) return res;

  auto read = [&](FlowResult& out) {
    out.ok = true;
    out.rho = glp_get_col_prim(lp, rho) * beta;
    for (int j = 0; j < n; ++j) {
      if (z[j]) out.z[j] = glp_get_col_prim(lp, z[j]) * beta;
      for (int i = 0; i < n; ++i) {
        if (g[j][i]) out.g[j][i] = glp_get_col_prim(lp, g[j][i]) * beta;
      }
    }
  };
  read(res);
  return res;
}

}  // namespace swarmlab::core::planner::detail
