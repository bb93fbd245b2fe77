// The split a butterfly round can execute (README.md, "Fractions").
#include <algorithm>

#include "core/planner/glpk_model.h"
#include "core/planner/lp_model.h"

namespace swarmlab::core::planner::detail {

bool ScaledProblem::interchangeable(int i, int k) const {
  if (kappa[i] != kappa[k] || down[i] != down[k] || up[i] != up[k] || can_compute[i] != can_compute[k] ||
      can_reduce[i] != can_reduce[k]) {
    return false;
  }
  // Relayed routes tie peers to particular relays: no symmetry is assumed then.
  if (!relay_both.empty()) return false;
  if (cap.empty()) return true;
  if (pair_cap(i, k) != pair_cap(k, i)) return false;
  for (int m = 0; m < n; ++m) {
    if (m == i || m == k) continue;
    if (pair_cap(i, m) != pair_cap(k, m) || pair_cap(m, i) != pair_cap(m, k)) return false;
  }
  return true;
}

namespace {

// The compact model's formula, its sums taken over each reducer's min(d, u) or, with
// `downloads`, over its download alone.
double compact_rate(const ScaledProblem& p, const std::vector<bool>& computes, bool downloads) {
  int m = 0, q = 0;
  double beta = kInf, computing_reducers = 0, other_reducers = 0;
  for (int i = 0; i < p.n; ++i) {
    const double b = downloads ? p.down[i] : p.both(i);
    if (computes[i]) {
      ++m;
      beta = std::min(beta, p.both(i));
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

}  // namespace

double consistent_rate(const ScaledProblem& p, const std::vector<bool>& computes) {
  return compact_rate(p, computes, /*downloads=*/false);
}

double compact_download_bound(const ScaledProblem& p, const std::vector<bool>& computes) {
  return compact_rate(p, computes, /*downloads=*/true);
}

SplitResult best_split(const ScaledProblem& p, const std::vector<bool>& computes,
                       const LpBasis* start, LpBasis* finish) {
  TermOff quiet;
  const int n = p.n;
  SplitResult res;
  const int m = count_set(computes);
  const double beta = slowest_computing_link(p, computes);
  res.w.assign(n, 0);
  if (m < 2) return res;
  if (!(beta > 0)) {
    res.ok = true;
    return res;
  }
  // Units of beta: W <= 1 (every computing peer uploads and downloads W). Each peer's row is
  // divided by its own capacity, so that GLPK's tolerances are relative to that peer's link: a
  // peer a million times slower than the rest still gets a share it can carry.
  const double clamp = 2.0 * n;
  std::vector<double> b(n);
  for (int i = 0; i < n; ++i) b[i] = std::min(p.both(i) / beta, clamp);
  // A closed pair (cap 0) between a computing peer and a reducer rules out that reducer's span.
  std::vector<bool> closed(n, false);
  for (const auto& [x, y] : p.closed_pairs) {
    if (computes[x]) closed[y] = true;
    if (computes[y]) closed[x] = true;
  }

  // What each relay forwards, per unit of w_j: pair x → y relayed carries [x computes]·w_y +
  // [y computes]·w_x. A relay without capacity closes the spans it would carry.
  const std::size_t relays = p.relay_both.size();
  std::vector<std::vector<double>> relayed(relays, std::vector<double>(n, 0.0));
  for (int x = 0; x < static_cast<int>(p.routes.size()); ++x) {
    for (int y = 0; y < n; ++y) {
      const int r = p.routes[x][y];
      if (x == y || r < 0) continue;
      if (computes[x]) relayed[r][y] += 1;
      if (computes[y]) relayed[r][x] += 1;
    }
  }
  for (std::size_t r = 0; r < relays; ++r) {
    const int k = p.relay_member[r];
    if (k >= 0 ? p.both(k) > 0 : p.relay_both[r] > 0) continue;
    for (int j = 0; j < n; ++j)
      if (relayed[r][j] > 0) closed[j] = true;
  }

  Model model;
  LpItems items;  // what each row and column stands for, for warm starts
  using K = LpItemKind;
  std::vector<int> w(n, 0);
  std::vector<double> wub(n, 0);
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j] || closed[j]) continue;
    // Computing reducer: W + (m − 2)·w_j <= b_j with W >= w_j; others: m·w_j <= b_j.
    wub[j] = std::min(1.0, b[j] / (computes[j] ? m - 1 : m));
    w[j] = model.col(0, wub[j], 1.0);
    items.col(w[j], {K::Share, j});
  }
  const int W = model.col(0, 1.0);
  items.col(W, {K::ShareSum});
  {
    const int r = model.row_eq(0);
    items.row(r, {K::ShareSumDefinition});
    model.coef(r, W, 1);
    for (int j = 0; j < n; ++j) {
      if (w[j]) model.coef(r, w[j], -1);
    }
  }
  // Which relays carry a span at all; those that are peers of this round share their row with
  // their own traffic.
  std::vector<bool> relay_used(relays, false);
  std::vector<int> relay_of_peer(n, -1);
  for (std::size_t r = 0; r < relays; ++r) {
    for (int j = 0; j < n; ++j) relay_used[r] = relay_used[r] || (relayed[r][j] > 0 && w[j]);
    if (relay_used[r] && p.relay_member[r] >= 0) relay_of_peer[p.relay_member[r]] = static_cast<int>(r);
  }
  const auto add_relayed = [&](int row, int r, double scale) {
    for (int j = 0; j < n; ++j)
      if (relayed[r][j] > 0 && w[j]) model.coef(row, w[j], relayed[r][j] / scale);
  };
  for (int i = 0; i < n; ++i) {
    // Upload and download carry the same load: a computing peer sends its parts of every other
    // span (W − w_i) and receives every other averaged span (W − w_i); a reducer receives m − c_i
    // parts of its span and returns it to m − c_i peers.
    const int as_relay = relay_of_peer[i];
    if (computes[i]) {
      if (!(b[i] > 0)) continue;  // cannot happen: b >= 1 for computing peers
      const int r = model.row_le(1);
      items.row(r, {K::PeerLoad, i});
      model.coef(r, W, 1 / b[i]);
      if (w[i]) model.coef(r, w[i], (m - 2) / b[i]);
      if (as_relay >= 0) add_relayed(r, as_relay, b[i]);
    } else if (as_relay >= 0) {
      const int r = model.row_le(1);
      items.row(r, {K::PeerLoad, i});
      if (w[i]) model.coef(r, w[i], m / b[i]);
      add_relayed(r, as_relay, b[i]);
    }
    // (a non-computing reducer that relays nothing: its row is its column bound)
  }
  for (std::size_t r = 0; r < relays; ++r) {
    if (!relay_used[r] || p.relay_member[r] >= 0) continue;
    const double cap = std::min(p.relay_both[r] / beta, clamp);
    add_relayed(model.row_le(1), static_cast<int>(r), cap);
  }
  // Pair x → y carries [x computes]·w_y (parts) + [y computes]·w_x (returns).
  for (int x = 0; x < n && !p.cap.empty(); ++x) {
    for (int y = 0; y < n; ++y) {
      if (x == y || p.cap[x][y] == kInf) continue;
      const double t = p.cap[x][y] / beta;
      const double most = (computes[x] ? wub[y] : 0) + (computes[y] ? wub[x] : 0);
      if (!(t < most) || !(t > 0)) continue;
      const int r = model.row_le(1);
      items.row(r, {K::PairLoad, x, y});
      if (computes[x] && w[y]) model.coef(r, w[y], 1 / t);
      if (computes[y] && w[x]) model.coef(r, w[x], 1 / t);
    }
  }
  glp_prob* lp = model.load();
  const bool warm = start_basis(lp, items, start);
  if (!(warm && basis_is_optimal(lp)) && !solve_simplex(lp)) return res;
  res.ok = true;
  if (finish) record_basis(lp, items, finish);
  for (int j = 0; j < n; ++j) {
    if (w[j]) res.w[j] = std::max(0.0, glp_get_col_prim(lp, w[j])) * beta;
    res.total += res.w[j];
  }
  return res;
}

}  // namespace swarmlab::core::planner::detail
