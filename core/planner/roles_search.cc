// Phase 1 for Roles::Optimize: which peers compute (README.md, "The roles search").
#include <algorithm>
#include <bit>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>

#include "core/planner/glpk_model.h"
#include "core/planner/lp_model.h"

namespace swarmlab::core::planner::detail {
namespace {

// Improvements smaller than this (relative) are solver noise: the search looks for roles worth
// at least incumbent·(1 + kBetter), and a bound within it of the incumbent proves optimality.
constexpr double kBetter = 1e-6;
// Transport cuts kept per case (each adds a row to its MIP).
constexpr int kMaxCaseCuts = 40;
// A case with at most kScanRoleSets role sets, of which at most kFewRoleSets (at 24 peers; fewer
// above, see few_role_sets) pass the bounds without an LP, is settled by testing each set instead
// of a MIP (README.md, "The roles search").
constexpr int kScanRoleSets = 2000;
constexpr int kFewRoleSets = 16;
// Root bases are shared per set of regions (a mask of at most four bits), separately for the
// programs with region counts.
constexpr unsigned kCounted = 1u << 16;


// Values of candidate roles: cheap bounds first (the aggregated form's first solve above, the best
// consistent split below), the averaging LP exactly only where a decision needs it. Cached. The
// splits and exact LPs of roles next to those of `start` (at most one peer more or less) start
// from its bases; with `record_bases` each LP keeps its final basis.
class Evaluator {
 public:
  Evaluator(const ScaledProblem& p, const PlanBases* start, bool record_bases)
      : p_(p), start_(start), record_bases_(record_bases) {
    if (!start) return;
    start_roles_.assign(p.n, false);
    for (const auto& [key, status] : start->averaging.status) {
      const LpItem item = LpItem::of(key);
      if (item.kind == LpItemKind::Received && item.a < p.n) start_roles_[item.a] = true;
    }
  }

  struct Range {
    double lower, upper;  // the averaging LP's ρ lies in [lower, upper]
  };
  // A feasible averaging rate without the LP: the best consistent split's (the LP's optimum when
  // known). Much cheaper than an LP, and usually enough to show that averaging keeps up.
  double lower(const std::vector<bool>& computes) {
    if (auto it = exact_.find(computes); it != exact_.end()) return it->second;
    if (auto it = bounds_.find(computes); it != bounds_.end()) return it->second.lower;
    const SplitResult& s = split(computes);
    return s.ok ? s.total : 0;
  }

  double rate(const std::vector<bool>& computes) {
    if (auto it = exact_.find(computes); it != exact_.end()) return it->second;
    const RateResult r = solve_lp(computes, /*stop_below=*/0, nullptr);
    double rho = r.ok ? r.rho : 0;
    if (!r.ok || !r.certified) rho = reference_averaging_lp(p_, computes).rho;
    exact_.emplace(computes, rho);
    return rho;
  }
  // Whether the exact rate reaches v, by the exact LP stopped once its bound falls below v (its
  // cut rounds only lower it; the first solve alone often decides): most roles tested against the
  // incumbent fall short, and their exact rate is never needed. The bound is kept, and so is a
  // stopped LP's basis after its exact phase: the same roles asked again against a lower v (a
  // chain asks "keeps up with its compute?", then "beats the incumbent?") resume from it instead
  // of starting over.
  bool reaches(const std::vector<bool>& computes, double v) {
    LpBasis stopped;
    const RateResult r = solve_lp(computes, v, &stopped);
    if (!r.ok || (!r.certified && !(r.rho < v))) return rate(computes) >= v;  // out of rounds
    if (r.certified) {
      exact_.emplace(computes, r.rho);
      return r.rho >= v;
    }
    bounds_.insert_or_assign(computes, Range{r.lower, r.rho});
    if (!stopped.status.empty()) stopped_.insert_or_assign(computes, std::move(stopped));
    return false;
  }
  // The final bases of these roles' LPs (when recording), handed over.
  PlanBases take_bases(const std::vector<bool>& computes) {
    const auto it = bases_.find(computes);
    return it == bases_.end() ? PlanBases{} : std::move(it->second);
  }
  // The transport cuts that bind in the averaging LP of these roles (after rate()).
  const std::vector<TransportCut>& cuts(const std::vector<bool>& computes) const {
    static const std::vector<TransportCut> none;
    const auto it = cuts_.find(computes);
    return it == cuts_.end() ? none : it->second;
  }

  double compute(const std::vector<bool>& computes) const {
    double sum = 0;
    for (int i = 0; i < p_.n; ++i) sum += computes[i] ? p_.kappa[i] : 0;
    return sum;
  }
  // min(Σ κ c, ρ): ξ·P in scaled units (two or more computing peers). The LP only when averaging
  // might bind.
  double value(const std::vector<bool>& computes) {
    const double kappa = compute(computes);
    if (kappa <= lower(computes)) return kappa;
    return std::min(kappa, rate(computes));
  }
  // Whether the upper bounds that need no LP (Σκ, the compact download bound, the pair-cap
  // bound) leave the value possibly at least `v`.
  bool may_reach(const std::vector<bool>& computes, double v) const {
    if (v <= 0) return true;  // every bound is (the first incumbent is asked against 0)
    return compute(computes) >= v && compact_download_bound(p_, computes) >= v &&
           pair_cap_bound(p_, computes) >= v;
  }
  // Whether the value is at least `v`, deciding on the bounds where they suffice.
  bool at_least(const std::vector<bool>& computes, double v) {
    // Cheapest first: the upper bounds with no LP, the split (a lower bound), what an earlier LP
    // of these roles found, the exact LP stopped once it decides.
    if (!may_reach(computes, v)) return false;
    if (lower(computes) >= v) return true;
    if (auto it = exact_.find(computes); it != exact_.end()) return it->second >= v;
    if (auto it = bounds_.find(computes); it != bounds_.end() && it->second.upper < v) return false;
    return reaches(computes, v);
  }

  int evaluations() const { return evaluations_; }
  int warm_dropped() const { return warm_dropped_; }

  // The best consistent split of these roles (solved once per role set).
  const SplitResult& split(const std::vector<bool>& computes) {
    auto it = splits_.find(computes);
    if (it == splits_.end()) {
      LpBasis* finish = record_bases_ ? &bases_[computes].split : nullptr;
      it = splits_
               .emplace(computes, best_split(p_, computes,
                                             near_start(computes) ? &start_->split : nullptr,
                                             finish))
               .first;
    }
    return it->second;
  }

 private:
  // The averaging LP of these roles (stopped below `stop_below`, its basis then in `stopped`),
  // from start_for()'s basis; keeps its binding cuts.
  RateResult solve_lp(const std::vector<bool>& computes, double stop_below, LpBasis* stopped) {
    ++evaluations_;
    std::vector<TransportCut> cuts;
    const LpBasis* start = start_for(computes);
    const RateResult r = averaging_lp(
        p_, computes,
        {.split = &split(computes), .start = start, .cuts = &cuts,
         .finish = record_bases_ ? &bases_[computes].averaging : nullptr,
         .stop_below = stop_below, .stopped = stopped});
    // The previous plan's basis, once it fit one role set's LP so badly that it was dropped (the
    // peer that came or went mattered), fits its neighbours no better: on one 64-peer re-solve it
    // was dropped three times, after 150 pivots each, and the re-solve took 1.7× a cold solve.
    if (r.warm_dropped && start_ && start == &start_->averaging) ++warm_dropped_;
    cuts_[computes] = std::move(cuts);
    return r;
  }
  // A stopped LP of these roles, else the previous plan's basis when these roles are near its
  // roles (until it was once dropped).
  const LpBasis* start_for(const std::vector<bool>& computes) const {
    if (auto it = stopped_.find(computes); it != stopped_.end()) return &it->second;
    return near_start(computes) && warm_dropped_ == 0 ? &start_->averaging : nullptr;
  }
  // Far from the start's roles its basis fits badly, and the exact phase it brings costs more
  // than it saves.
  bool near_start(const std::vector<bool>& computes) const {
    if (!start_) return false;
    int differ = 0;
    for (int i = 0; i < p_.n; ++i) differ += computes[i] != start_roles_[i] ? 1 : 0;
    return differ <= 1;
  }

  const ScaledProblem& p_;
  const PlanBases* start_;
  std::vector<bool> start_roles_;  // the computing peers of the start's LPs
  bool record_bases_;
  std::map<std::vector<bool>, PlanBases> bases_;
  std::map<std::vector<bool>, SplitResult> splits_;
  std::map<std::vector<bool>, double> exact_;
  std::map<std::vector<bool>, Range> bounds_;
  std::map<std::vector<bool>, LpBasis> stopped_;  // reaches(): LPs stopped below their v
  std::map<std::vector<bool>, std::vector<TransportCut>> cuts_;
  int evaluations_ = 0;
  int warm_dropped_ = 0;  // LPs from the previous plan's basis that dropped it
};

// Upper bound on the value of any roles with exactly m computing peers among `eligible`
// (README.md, "The roles search"): the m largest κ; the m-th largest min(d, u) (every computing
// peer uploads and downloads at least ρ); and, for m >= 3, the download bound
// (m − 2 + q)·ρ <= Σ_{computing reducers} d_i + (m−2)/m · Σ_{other reducers} d_i at its best q.
class CheapBound {
 public:
  CheapBound(const ScaledProblem& p, const std::vector<bool>& eligible) {
    for (int i = 0; i < p.n; ++i) {
      if (p.can_reduce[i]) all_reducers_d_ += p.down[i];
      if (!eligible[i]) continue;
      kappa_.push_back(p.kappa[i]);
      b_.push_back(p.both(i));
      if (p.can_reduce[i]) {
        reducer_d_.push_back(p.down[i]);
      } else {
        ++clients_;
      }
    }
    for (auto* v : {&kappa_, &b_, &reducer_d_}) std::sort(v->begin(), v->end(), std::greater<>());
  }

  int eligible() const { return static_cast<int>(b_.size()); }

  double operator()(int m) const {
    if (m > eligible()) return -kInf;
    double ub = std::accumulate(kappa_.begin(), kappa_.begin() + m, 0.0);
    ub = std::min(ub, b_[m - 1]);
    if (m >= 3) {
      const int q_max = std::min<int>(m, static_cast<int>(reducer_d_.size()));
      const int q_min = std::max(0, m - clients_);
      const double md = m;
      double best = 0, top = 0;
      for (int q = 0; q <= q_max; ++q) {
        if (q > 0) top += reducer_d_[q - 1];
        if (q < q_min) continue;
        best = std::max(best, ((md - 2) / md * all_reducers_d_ + 2 / md * top) / (md - 2 + q));
      }
      ub = std::min(ub, best);
    }
    return ub;
  }

 private:
  std::vector<double> kappa_, b_, reducer_d_;
  int clients_ = 0;
  double all_reducers_d_ = 0;
};

// A program's basis by position: the status of each row and column.
struct RelaxationBasis {
  std::vector<int> rows, cols;  // [0] unused, as GLPK counts from 1

  static RelaxationBasis of(glp_prob* lp) {
    RelaxationBasis b;
    b.read(lp);
    return b;
  }
  void read(glp_prob* lp) {
    const int nr = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
    rows.assign(nr + 1, GLP_BS);
    cols.assign(nc + 1, GLP_NL);
    for (int r = 1; r <= nr; ++r) rows[r] = glp_get_row_stat(lp, r);
    for (int c = 1; c <= nc; ++c) cols[c] = glp_get_col_stat(lp, c);
  }
  // The basis of the program's first `n_rows` rows and `n_cols` columns: empty unless the rows
  // after them are basic and the columns after them are not (then dropping both keeps a basis).
  RelaxationBasis first(int n_rows, int n_cols) const {
    for (std::size_t r = n_rows + 1; r < rows.size(); ++r) {
      if (rows[r] != GLP_BS) return {};
    }
    for (std::size_t c = n_cols + 1; c < cols.size(); ++c) {
      if (cols[c] == GLP_BS) return {};
    }
    RelaxationBasis b = *this;
    if (b.rows.size() > static_cast<std::size_t>(n_rows) + 1) b.rows.resize(n_rows + 1);
    if (b.cols.size() > static_cast<std::size_t>(n_cols) + 1) b.cols.resize(n_cols + 1);
    return b;
  }
  // Sets it as `lp`'s basis when `lp` has at least its rows and columns: rows added since are
  // basic, columns added since at a bound. False, and `lp` unchanged, otherwise.
  bool apply(glp_prob* lp) const {
    const int nr = glp_get_num_rows(lp), nc = glp_get_num_cols(lp);
    if (cols.empty() || static_cast<int>(cols.size()) > nc + 1 ||
        static_cast<int>(rows.size()) > nr + 1) {
      return false;
    }
    for (int r = 1; r <= nr; ++r) {
      glp_set_row_stat(lp, r, r < static_cast<int>(rows.size()) ? rows[r] : GLP_BS);
    }
    for (int c = 1; c <= nc; ++c) {
      glp_set_col_stat(lp, c, c < static_cast<int>(cols.size()) ? cols[c] : GLP_NL);
    }
    return true;
  }
};

// A region whose number of computing peers a case fixes (README.md, "The roles search", step 6).
struct RegionCount {
  std::vector<int> members;  // the region's compute-capable peers
  int count;
};

struct MipSolve {
  MipOutcome outcome;
  std::vector<bool> computes;
  double value = 0;  // the program's ρ at its solution
};

// The pairs from reducer j to the receivers T (other than j): the σ columns of those whose cap
// can bind (`sigma[j][i]`, 0 where none), and how many others there are, each returning at most
// z_j. What j returns to T is at most their sum (exact when all of T computes).
struct PairsTo {
  std::vector<int> sigma;
  int uncapped = 0;
};
PairsTo pairs_to(const std::vector<std::vector<int>>& sigma, int j, const std::vector<int>& T) {
  PairsTo out;
  for (int i : T) {
    if (i == j) continue;
    const int col = sigma[j].empty() ? 0 : sigma[j][i];
    if (col) {
      out.sigma.push_back(col);
    } else {
      ++out.uncapped;
    }
  }
  return out;
}
// What reducer j (span column zj) can return to the receivers T, as the terms of an upper bound
// in <= form: σ_ji on a capped pair, z_j on each other (counted whether or not i computes: exact
// when all of T computes, valid always).
std::vector<std::pair<int, double>> returns_terms(const std::vector<std::vector<int>>& sigma,
                                                  int zj, int j, const std::vector<int>& T) {
  const PairsTo pairs = pairs_to(sigma, j, T);
  std::vector<std::pair<int, double>> terms;
  for (int col : pairs.sigma) terms.emplace_back(col, -1.0);
  if (pairs.uncapped) terms.emplace_back(zj, -pairs.uncapped);
  return terms;
}

// The roles program of one case: exactly m computing peers among `eligible`, looking only for
// plans with ρ >= cut (README.md, "The roles search"). It is the aggregated averaging model with
// the roles as binaries: products of a role and a rate are linearised (exactly, for integral
// roles), so for integral roles it equals the averaging LP up to the transport cuts it has. Kept
// across the case's steps: a higher cut, exclusions and cuts are added to the loaded problem,
// and each solve restarts the simplex from the previous relaxation's basis.
class CaseMip {
 public:
  CaseMip(const ScaledProblem& p, int m, double cut, const std::vector<bool>& eligible,
          const std::vector<std::vector<int>>& regions, const std::vector<double>& span_cap,
          const std::vector<RegionCount>& counts)
      : n_(p.n), m_(m) {
    Model& model = model_;
    const int n = p.n;
    const double md = m;
    auto E = [&](int i) { return static_cast<bool>(eligible[i]); };
    auto R = [&](int i) { return static_cast<bool>(p.can_reduce[i]); };

    std::vector<double> zub(n, 0);
    double zsum = 0;
    for (int j = 0; j < n; ++j) {
      if (!R(j)) continue;
      double best = 0;  // some computing k ≠ j sends j's parts at z_j
      for (int k = 0; k < n; ++k) {
        if (k != j && E(k)) best = std::max(best, std::min(p.up[k], p.pair_cap(k, j)));
      }
      // A reducer that cannot compute only returns its span: WLOG no larger than its widest pair to
      // a receiver.
      double widest = E(j) ? kInf : 0;
      for (int i = 0; i < n && widest < kInf; ++i) {
        if (i != j && E(i)) widest = std::max(widest, p.pair_cap(j, i));
      }
      zub[j] = std::max(0.0, std::min({1.0, p.down[j] / (md - 1), best, span_cap[j], widest}));
      zsum += zub[j];
    }
    double zmax = 0;  // Z − z_k <= u_k for every computing k
    for (int k = 0; k < n; ++k) {
      if (E(k)) zmax = std::max(zmax, p.up[k] + zub[k]);
    }
    const double zub_all = std::min(zsum, zmax);

    const int rho = model.col(std::min(cut, 1.0), 1.0, 1.0);
    std::vector<int> c(n, 0), z(n, 0), y(n, 0), G(n, 0), h(n, 0), A(n, 0);
    for (int i = 0; i < n; ++i) {
      if (E(i)) c[i] = model.col(0, 1, 0, /*binary=*/true);
    }
    for (int j = 0; j < n; ++j) {
      if (!R(j)) continue;
      z[j] = model.col(0, zub[j]);
      if (E(j)) y[j] = model.col(0, zub[j]);  // c_j·z_j
      h[j] = model.col(0, std::min(p.up[j], md * zub[j]));
    }
    for (int i = 0; i < n; ++i) {
      if (!E(i)) continue;
      G[i] = model.col(0, std::min(1.0, p.down[i]));
      A[i] = model.col(0, p.up[i]);  // c_i·(Z − z_i): i's parts of the other spans
    }
    const int Z = model.col(0, zub_all);

    {
      const int r = model.row_eq(m);
      for (int i = 0; i < n; ++i) {
        if (c[i]) model.coef(r, c[i], 1);
      }
    }
    if (p.compute_term) {  // ρ <= Σ κ c
      const int r = model.row_le(0);
      model.coef(r, rho, 1);
      for (int i = 0; i < n; ++i) {
        if (c[i]) model.coef(r, c[i], -p.kappa[i]);
      }
    }
    {
      const int r = model.row_eq(0);
      model.coef(r, Z, 1);
      for (int j = 0; j < n; ++j) {
        if (z[j]) model.coef(r, z[j], -1);
      }
    }
    {  // ρ <= Z: a computing receiver gets at most every span
      const int r = model.row_le(0);
      model.coef(r, rho, 1);
      model.coef(r, Z, -1);
    }
    {
      // The per-peer rows below hold only when c_i = 1; over the m computing peers on average they
      // read m·ρ <= Σ c_i·min(d_i, u_i) and m·ρ <= Σ (y_i + G_i), which stay strong when the roles
      // are fractional.
      const int rb = model.row_le(0);
      const int rg = model.row_le(0);
      model.coef(rb, rho, md);
      model.coef(rg, rho, md);
      for (int i = 0; i < n; ++i) {
        if (!E(i)) continue;
        model.coef(rb, c[i], -std::min(1.0, p.both(i)));
        model.coef(rg, G[i], -1);
        if (y[i]) model.coef(rg, y[i], -1);
      }
    }
    for (int i = 0; i < n; ++i) {
      if (!E(i)) continue;
      const double b = p.both(i);
      if (b < 1) {  // a computing peer uploads and downloads at least ρ
        const int r = model.row_le(1);
        model.coef(r, rho, 1);
        model.coef(r, c[i], 1 - b);
      }
      {  // receiver: ρ <= z_i + G_i when computing (ρ <= 1 otherwise)
        const int r = model.row_le(1);
        model.coef(r, rho, 1);
        model.coef(r, G[i], -1);
        if (z[i]) model.coef(r, z[i], -1);
        model.coef(r, c[i], 1);
      }
      {  // only computing peers receive
        const int r = model.row_le(0);
        model.coef(r, G[i], 1);
        model.coef(r, c[i], -std::min(1.0, p.down[i]));
      }
      {  // G_i <= Σ_{j≠i} z_j
        const int r = model.row_le(0);
        model.coef(r, G[i], 1);
        model.coef(r, Z, -1);
        if (z[i]) model.coef(r, z[i], 1);
      }
      {  // with ρ >= cut: a computing i receives cut − z_i from the others and uploads at least as
         // much in parts (Z − z_i >= ρ − z_i): G_i + y_i >= cut·c_i, A_i + y_i >= cut·c_i
        int r = model.row_ge(0);
        model.coef(r, G[i], 1);
        if (y[i]) model.coef(r, y[i], 1);
        model.coef(r, c[i], -std::min(cut, 1.0));
        r = model.row_ge(0);
        model.coef(r, A[i], 1);
        if (y[i]) model.coef(r, y[i], 1);
        model.coef(r, c[i], -std::min(cut, 1.0));
      }
      {  // A_i >= Z − z_i − Zmax·(1 − c_i)
        const int r = model.row_ge(-zub_all);
        model.coef(r, A[i], 1);
        model.coef(r, Z, -1);
        if (z[i]) model.coef(r, z[i], 1);
        model.coef(r, c[i], -zub_all);
      }
    }
    for (int j = 0; j < n; ++j) {
      if (!R(j)) continue;
      {  // download: m − c_j parts of j's span, and returns when j computes
        const int r = model.row_le(p.down[j]);
        model.coef(r, z[j], md);
        if (y[j]) model.coef(r, y[j], -1);
        if (G[j]) model.coef(r, G[j], 1);
      }
      {  // upload: parts when j computes, and returns
        const int r = model.row_le(p.up[j]);
        if (A[j]) model.coef(r, A[j], 1);
        model.coef(r, h[j], 1);
      }
      {  // h_j <= (m − c_j)·z_j
        const int r = model.row_le(0);
        model.coef(r, h[j], 1);
        model.coef(r, z[j], -md);
        if (y[j]) model.coef(r, y[j], 1);
      }
      if (y[j]) {  // y_j = c_j·z_j
        int r = model.row_le(0);
        model.coef(r, y[j], 1);
        model.coef(r, z[j], -1);
        r = model.row_le(0);
        model.coef(r, y[j], 1);
        model.coef(r, c[j], -zub[j]);
        r = model.row_ge(-zub[j]);
        model.coef(r, y[j], 1);
        model.coef(r, z[j], -1);
        model.coef(r, c[j], -zub[j]);
      }
    }
    {  // returns received = returns sent
      const int r = model.row_le(0);
      for (int i = 0; i < n; ++i) {
        if (G[i]) model.coef(r, G[i], 1);
        if (h[i]) model.coef(r, h[i], -1);
      }
    }
    for (const auto& region : regions) {  // every region of this case has a computing peer
      const int r = model.row_ge(1);
      for (int k : region) {
        if (c[k]) model.coef(r, c[k], 1);
      }
    }
    // A computing k streams j's parts at z_j over the pair k → j.
    if (!p.cap.empty()) {
      for (int k = 0; k < n; ++k) {
        if (!E(k)) continue;
        for (int j = 0; j < n; ++j) {
          if (j == k || !z[j]) continue;
          const double t = p.pair_cap(k, j);
          if (!(t < zub[j])) continue;
          const int r = model.row_le(zub[j]);
          model.coef(r, z[j], 1);
          model.coef(r, c[k], zub[j] - t);
        }
      }
    }
    // Capped pairs (README.md, "The roles search"): σ_ji is what reducer j can return to computing
    // i over a capped pair: σ_ji <= z_j, σ_ji <= t_ji − c_j·z_i (j's parts of i's span share the
    // pair), σ_ji = 0 unless i computes. A receiver gets at most its uncapped spans and its σ.
    // Receivers are also grouped by which reducers reach them through a capped pair (with regional
    // caps, a region's receivers): what a group receives from reducer j is at most h_j and at most
    // Σ σ_ji over the group's capped pairs (a transport cut for the group).
    std::vector<std::vector<int>> sigma(n);
    auto sig = [&](int j, int i) { return sigma[j].empty() ? 0 : sigma[j][i]; };
    // H_j: what j returns to a group of receivers, at most h_j and at most `terms` (a bound on its
    // pairs to them, in <= form); its −1 goes into the group's cut `main`.
    auto add_returns_column = [&](int j, const std::vector<std::pair<int, double>>& terms,
                                  std::vector<std::pair<int, double>>* main) {
      const int H = model.col(0, std::min(p.up[j], md * zub[j]));
      main->emplace_back(H, -1.0);
      int r = model.row_le(0);
      model.coef(r, H, 1);
      model.coef(r, h[j], -1);
      r = model.row_le(0);
      model.coef(r, H, 1);
      for (const auto& [col, v] : terms) model.coef(r, col, v);
      return H;
    };
    if (!p.cap.empty()) {
      for (int j = 0; j < n; ++j) {
        if (!z[j]) continue;
        for (int i = 0; i < n; ++i) {
          if (i == j || !G[i]) continue;
          const double t = p.pair_cap(j, i);
          if (!(t < zub[j] + (c[j] && z[i] ? zub[i] : 0))) continue;  // can never bind
          if (sigma[j].empty()) sigma[j].assign(n, 0);
          const int col = model.col(0, std::min(t, zub[j]));
          sigma[j][i] = col;
          int r = model.row_le(0);
          model.coef(r, col, 1);
          model.coef(r, z[j], -1);
          r = model.row_le(0);
          model.coef(r, col, 1);
          model.coef(r, c[i], -std::min(t, zub[j]));
          if (c[j] && z[i]) {  // σ_ji + z_i <= t_ji + zub_i·(1 − c_j)
            r = model.row_le(t + zub[i]);
            model.coef(r, col, 1);
            model.coef(r, z[i], 1);
            model.coef(r, c[j], zub[i]);
          }
        }
      }
      std::map<std::vector<int>, std::vector<int>> groups;
      int receivers = 0;
      for (int i = 0; i < n; ++i) {
        if (!G[i]) continue;
        ++receivers;
        std::vector<int> from;
        for (int j = 0; j < n; ++j) {
          if (j != i && sig(j, i)) from.push_back(j);
        }
        if (from.empty()) continue;
        groups[from].push_back(i);
        // G_i <= Σ_{uncapped j} z_j + Σ_{capped j} σ_ji
        const int r = model.row_le(0);
        model.coef(r, G[i], 1);
        for (int j = 0; j < n; ++j) {
          if (j == i || !z[j]) continue;
          model.coef(r, sig(j, i) ? sig(j, i) : z[j], -1);
        }
      }
      for (const auto& [from, members] : groups) {
        if (members.size() < 2 || static_cast<int>(members.size()) == receivers) continue;
        std::vector<std::pair<int, double>> main;
        for (int i : members) main.emplace_back(G[i], 1.0);
        // Reducers that reach every member through a capped pair: H_j <= h_j, Σ σ_ji.
        // The others (with regional caps, the group's own region): together at most their uploads
        // and at most Σ_{i∈g computing} Σ_{j≠i} z_j = Σ_{i∈g} (c_i·Z_g − c_i·z_i), Z_g their spans;
        // c_i·Z_g is linearised with W_i <= Z_g, W_i <= c_i·max Z_g.
        std::vector<int> direct;
        for (int j = 0; j < n; ++j) {
          if (!z[j]) continue;
          bool capped_to_all = true;
          for (int i : members) capped_to_all = capped_to_all && (i == j || sig(j, i));
          if (!capped_to_all) {
            direct.push_back(j);
            continue;
          }
          const std::vector<std::pair<int, double>> terms = returns_terms(sigma, z[j], j, members);
          if (terms.empty()) continue;
          // H_j is also at most zub_j per computing receiver of the group.
          const int H = add_returns_column(j, terms, &main);
          const int r = model.row_le(0);
          model.coef(r, H, 1);
          bool any = false;
          for (int i : members) {
            if (i != j && c[i]) {
              model.coef(r, c[i], -zub[j]);
              any = true;
            }
          }
          if (!any) model.set_row_hi(r, 0);
        }
        if (!direct.empty()) {
          const int Zg = model.col(0, kInf);
          double zg_max = 0;
          int r = model.row_eq(0);
          model.coef(r, Zg, 1);
          for (int j : direct) {
            model.coef(r, z[j], -1);
            zg_max += zub[j];
          }
          const int Hg = model.col(0, kInf);  // returns of the direct reducers to the group
          main.emplace_back(Hg, -1.0);
          r = model.row_le(0);  // Hg <= Σ h_j
          model.coef(r, Hg, 1);
          for (int j : direct) model.coef(r, h[j], -1);
          const int rs = model.row_le(0);  // Hg <= Σ_{i∈g} (W_i − y_i)
          model.coef(rs, Hg, 1);
          for (int i : members) {
            const int W = model.col(0, zg_max);
            model.coef(rs, W, -1);
            if (y[i]) {
              bool i_direct = std::find(direct.begin(), direct.end(), i) != direct.end();
              if (i_direct) model.coef(rs, y[i], 1);
            }
            int rw = model.row_le(0);
            model.coef(rw, W, 1);
            model.coef(rw, Zg, -1);
            rw = model.row_le(0);
            model.coef(rw, W, 1);
            model.coef(rw, c[i], -zg_max);
          }
        }
        const int r = model.row_le(0);
        for (const auto& [col, v] : main) model.coef(r, col, v);
      }
    }
    add_symmetry_breaking(p, c, model);
    // Regions with a fixed count v (appended, so that the program without them is a prefix whose
    // basis still fits): Σ c = v over the region; its computing receivers' rows summed, v·ρ <=
    // Σ (y_i + G_i) and v·ρ <= Σ c_i·min(d_i, u_i), which stay strong for fractional roles; and
    // the exact transport cut of its receivers, linear now that v is a constant: reducer j
    // returns them H_j <= h_j and H_j <= Σ σ_ji over its capped pairs, or (v − c_j)·z_j when it
    // has none (the per-pair count that needed one column per pair).
    for (const RegionCount& rc : counts) {
      std::vector<int> g;
      for (int i : rc.members) {
        if (c[i]) g.push_back(i);
      }
      const double v = rc.count;
      int r = model.row_eq(v);
      const int rg = model.row_le(0), rb = model.row_le(0);
      model.coef(rg, rho, v);
      model.coef(rb, rho, v);
      std::vector<std::pair<int, double>> main;
      for (int i : g) {
        model.coef(r, c[i], 1);
        model.coef(rg, G[i], -1);
        if (y[i]) model.coef(rg, y[i], -1);
        model.coef(rb, c[i], -std::min(1.0, p.both(i)));
        main.emplace_back(G[i], 1.0);
      }
      for (int j = 0; j < n; ++j) {
        if (!z[j] || std::ranges::none_of(g, [&](int i) { return i != j; })) continue;
        std::vector<std::pair<int, double>> terms;
        if (pairs_to(sigma, j, g).sigma.empty()) {  // every pair uncapped: (v − [j in g]·c_j)·z_j
          terms.emplace_back(z[j], -v);
          if (y[j] && std::ranges::find(g, j) != g.end()) terms.emplace_back(y[j], 1.0);
        } else {
          terms = returns_terms(sigma, z[j], j, g);
        }
        add_returns_column(j, terms, &main);
      }
      r = model.row_le(0);
      for (const auto& [col, coef] : main) model.coef(r, col, coef);
    }

    lp_ = model.load();
    built_rows_ = glp_get_num_rows(lp_);
    built_cols_ = glp_get_num_cols(lp_);
    zub_ = std::move(zub);
    glp_scale_prob(lp_, GLP_SF_AUTO);
    rho_ = rho;
    c_ = std::move(c);
    z_ = std::move(z);
    y_ = std::move(y);
    G_ = std::move(G);
    h_ = std::move(h);
    sigma_ = std::move(sigma);
    for (int i = 0; i < n; ++i) {
      if (G_[i]) everyone_.push_back(i);
    }
  }
  CaseMip(const CaseMip&) = delete;
  CaseMip& operator=(const CaseMip&) = delete;

  // A higher cut: ρ's lower bound, and peers no longer eligible cannot compute. (Rows written
  // for the old cut stay valid, only weaker.)
  void tighten(double cut, const std::vector<bool>& eligible) {
    Model::set_col_bounds(lp_, rho_, std::min(cut, 1.0), 1.0);
    for (int i = 0; i < n_; ++i) {
      if (c_[i] && !eligible[i]) glp_set_col_bnds(lp_, c_[i], GLP_FX, 0.0, 0.0);
    }
  }

  // Roles known not to beat the cut.
  void exclude(const std::vector<bool>& roles) {
    std::vector<std::pair<int, double>> terms;
    for (int i = 0; i < n_; ++i) {
      if (roles[i] && c_[i]) terms.emplace_back(c_[i], 1.0);
    }
    Model::add_row_le(lp_, terms, m_ - 1);
  }

  // A transport cut the averaging LP needed for roles this program overrated. A returns cut of
  // reducer j: h_j <= Σ_{i≠j} (σ_ji on a capped pair, else w_ji = c_i·z_j), exact for every role
  // set. A cut of receivers T: what pair j → i can return taken as σ_ji on a capped pair and z_j
  // otherwise (counted whether or not i computes: exact for those roles, valid for all).
  void add(const TransportCut& tc) {
    std::map<int, double> row;
    if (tc.returner >= 0) {
      // Counting z_j for every receiver that might compute, as the receivers' cuts do, left it
      // far weaker than the LP's row with few computing peers: 0.544 against 0.519 for one
      // 48-peer role set, which the MIPs then proposed again and again in look-alike sets.
      const int j = tc.returner;
      if (!z_[j]) return;
      row[h_[j]] += 1;
      for (int i : everyone_) {
        if (i != j) row[sig(j, i) ? sig(j, i) : span_to(j, i)] -= 1;
      }
    } else {
      // Σ_T G_i <= Σ_{j in uploaders} h_j + Σ_{other j} Σ_{i∈T} (σ_ji or z_j), over the reducers
      // with a receiver in T other than themselves
      for (int i : tc.receivers) {
        if (G_[i]) row[G_[i]] += 1;
      }
      if (row.empty()) return;
      std::vector<bool> uploader(n_, false);
      for (int j : tc.uploaders) uploader[j] = true;
      for (int j = 0; j < n_; ++j) {
        if (!z_[j]) continue;
        if (std::ranges::none_of(tc.receivers, [&](int i) { return i != j; })) continue;
        if (uploader[j]) {
          row[h_[j]] -= 1;
        } else {
          for (const auto& [col, v] : returns_terms(sigma_, z_[j], j, tc.receivers)) {
            row[col] += v;
          }
        }
      }
    }
    std::vector<std::pair<int, double>> terms;
    for (const auto& [col, v] : row) {
      if (v != 0) terms.emplace_back(col, v);
    }
    Model::add_row_le(lp_, terms, 0);
  }

  // `shared`: the root basis of the last MIP of this case's set of regions (and kind: with or
  // without region counts), where this MIP has none of its own yet; else `fallback`, that of the
  // programs without counts, which are a prefix of those with. Cases of one region set differ
  // only in m, the counts and the cut, so their programs usually have the same rows and columns,
  // and the root starts a few pivots from that basis (about 7× faster than from scratch at 48
  // peers). A basis that fits badly only costs pivots (a singular one sends run_mip back to a
  // fresh start). Left with this MIP's root basis for the next one.
  MipSolve solve(std::int64_t max_nodes, RelaxationBasis* shared,
                 const RelaxationBasis* fallback = nullptr) {
    MipSolve out;
    bool warm = last_.apply(lp_);
    if (!warm && shared) warm = shared->apply(lp_);
    if (!warm && fallback) warm = fallback->apply(lp_);
    out.outcome = run_mip(lp_, max_nodes, warm, [&] { last_.read(lp_); });
    // Handed on without the rows added to this program since it was built (cuts, exclusions). An
    // infeasible root leaves the basis at the end of phase 1: still close to the next case's.
    if (shared) {
      RelaxationBasis root =
          (out.outcome.infeasible ? RelaxationBasis::of(lp_) : last_).first(built_rows_, built_cols_);
      if (!root.cols.empty()) *shared = std::move(root);
    }
    if (!out.outcome.solved) return out;
    out.value = glp_mip_col_val(lp_, rho_);
    out.computes.assign(n_, false);
    for (int i = 0; i < n_; ++i) {
      if (c_[i]) out.computes[i] = glp_mip_col_val(lp_, c_[i]) > 0.5;
    }
    return out;
  }

 private:
  int sig(int j, int i) const { return sigma_[j].empty() ? 0 : sigma_[j][i]; }
  // The column w_ji <= z_j, w_ji <= zub_j·c_i: what pair j → i returns, zero unless i computes.
  int span_to(int j, int i) {
    if (span_to_.empty()) span_to_.assign(n_, std::vector<int>(n_, 0));
    int& col = span_to_[j][i];
    if (!col) {
      col = glp_add_cols(lp_, 1);
      Model::set_col_bounds(lp_, col, 0, zub_[j]);
      Model::add_row_le(lp_, {{col, 1.0}, {z_[j], -1.0}}, 0);
      Model::add_row_le(lp_, {{col, 1.0}, {c_[i], -zub_[j]}}, 0);
    }
    return col;
  }

  int n_, m_;
  Model model_;
  glp_prob* lp_ = nullptr;
  int rho_ = 0;
  std::vector<int> c_, z_, y_, G_, h_;
  std::vector<std::vector<int>> sigma_;
  std::vector<int> everyone_;
  RelaxationBasis last_;  // the last relaxation's basis
  int built_rows_ = 0, built_cols_ = 0;  // before any cut or exclusion
  std::vector<double> zub_;               // upper bounds of the spans z_j
  // w_ji = c_i·z_j on a pair j → i without σ, made when a cut first needs it (0: none yet).
  std::vector<std::vector<int>> span_to_;
};

}  // namespace

RolesResult search_roles(const ScaledProblem& p, const RolesSearchLimits& limits,
                         const std::vector<bool>& hint, const PlanBases* start,
                         bool record_bases) {
  TermOff quiet;
  const int n = p.n;
  RolesResult res;
  std::vector<int> capable;
  for (int i = 0; i < n; ++i) {
    if (p.can_compute[i]) capable.push_back(i);
  }
  const int k = static_cast<int>(capable.size());
  if (k < 2) {
    res.exact = true;
    return res;
  }
  const std::int64_t nodes =
      limits.max_mip_nodes > 0 ? limits.max_mip_nodes : default_max_mip_nodes(n);
  // MIP solves in all (each after the last one's roles were checked): a deterministic budget.
  const int max_mips = limits.max_mips > 0 ? limits.max_mips : kDefaultMaxMips;

  Evaluator ev(p, start, record_bases);
  // What the result says of the roles it settles on, besides their value.
  auto describe_roles = [&] {
    res.rate = ev.rate(res.computes);
    res.split = ev.split(res.computes);
    res.bases = ev.take_bases(res.computes);
  };
  // Ties keep the earlier candidate, unless the later one `wins_ties`.
  auto consider = [&](const std::vector<bool>& roles, bool wins_ties = false) {
    if (count_set(roles) < 2) return;
    if (!ev.at_least(roles, res.value)) return;
    const double value = ev.value(roles);
    if (wins_ties ? value < res.value : value <= res.value) return;
    res.value = value;
    res.computes = roles;
  };

  // Incumbents. With a warm start, the previous roles (usually optimal or nearly so after one
  // peer joins or leaves). Otherwise every compute-capable peer, then nested sets by bandwidth
  // (best_nested), and once the regions are known the same within each set of regions.
  std::vector<bool> warm(n, false);
  int warm_count = 0;
  if (static_cast<int>(hint.size()) == n) {
    for (int i = 0; i < n; ++i) {
      warm[i] = hint[i] && p.can_compute[i];
      warm_count += warm[i] ? 1 : 0;
    }
  }
  auto keeps_up = [&](const std::vector<bool>& roles) {
    return ev.at_least(roles, ev.compute(roles));  // averaging keeps up with its compute
  };
  if (warm_count < 2 || warm == p.can_compute) {
    // Every compute-capable peer computing is optimal when averaging keeps up with all of them:
    // no role choice beats Σκ (κ_i < 1 here, as ρ <= 1).
    if (keeps_up(p.can_compute)) {
      res.computes = p.can_compute;
      res.value = ev.compute(res.computes);
      describe_roles();
      res.bound = res.value;
      res.exact = res.everyone = true;
      res.evaluations = ev.evaluations();
      res.warm_dropped = ev.warm_dropped();
      return res;
    }
  }
  // The best of the nested sets "the k peers of `pool` with the largest min(d, u)": along them Σκ
  // grows and the averaging rate falls (more computing peers never average faster), so the best
  // is where the two cross, found by binary search.
  auto best_nested = [&](std::vector<int> pool) {
    if (pool.size() < 2) return;
    std::stable_sort(pool.begin(), pool.end(), [&](int a, int b) { return p.both(a) > p.both(b); });
    auto prefix = [&](int size) {
      std::vector<bool> roles(n, false);
      for (int t = 0; t < size; ++t) roles[pool[t]] = true;
      return roles;
    };
    const int size = static_cast<int>(pool.size());
    int lo = 2, hi = size;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (keeps_up(prefix(mid))) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    consider(prefix(lo));
    if (lo < size) consider(prefix(lo + 1));
  };
  if (warm_count >= 2) {
    consider(warm);
    // After a join or a departure the optimum is often the previous roles with one more peer
    // (the newcomer, or a replacement for a computing peer that left): the widest peer not yet
    // computing.
    int widest = -1;
    for (int i : capable) {
      if (!warm[i] && (widest < 0 || p.both(i) > p.both(widest))) widest = i;
    }
    if (widest >= 0) {
      std::vector<bool> more = warm;
      more[widest] = true;
      consider(more);
    }
    res.warm = true;
  } else {
    // Every peer computing is tested after the nested sets, as a candidate that wins ties (the
    // order it used to be tested in): against their incumbent the bounds without an LP, or its
    // LP stopped below it, usually dismiss it, where before its exact LP, the search's largest,
    // was solved against nothing (a third of one 24-peer solve).
    best_nested(capable);
    consider(p.can_compute, /*wins_ties=*/true);
  }

  // Proof: one program per number m of computing peers whose bound can beat the incumbent, each
  // looking only for better roles. A solution is checked on the averaging LP; if the program
  // overrated it, the transport cuts found by that check (or, failing that, excluding exactly
  // those roles) make the next solve tighter.
  std::vector<std::vector<bool>> excluded;
  const double better = std::max(kBetter, limits.gap);
  auto cut_of = [&] { return res.value * (1 + better); };
  auto eligible_for = [&](double cut) {
    std::vector<bool> e(n, false);
    for (int i : capable) e[i] = p.both(i) >= cut;
    return e;
  };
  // With pair caps, peers are grouped into regions by where their caps go (peers that cap the
  // same destinations), and every program also fixes which regions have a computing peer: each
  // such region's caps then bound the spans of the reducers it reaches (z_j <= t_kj for some
  // computing k), a hard bound where the plain program only has a big-M one.
  std::vector<std::vector<int>> regions;
  if (!p.cap.empty()) {
    std::map<std::vector<int>, std::vector<int>> by_pattern;
    for (int k : capable) {
      std::vector<int> to;
      for (int j = 0; j < n; ++j) {
        if (j != k && p.pair_cap(k, j) != kInf) to.push_back(j);
      }
      by_pattern[to].push_back(k);
    }
    for (auto& [to, members] : by_pattern) regions.push_back(members);
    std::sort(regions.begin(), regions.end());
  }
  if (regions.size() < 2 || regions.size() > 4) regions.clear();
  struct Case {
    int m;
    unsigned mask;  // regions with a computing peer (0: no split)
    double bound = -kInf;
    // With a mask of two regions, after a split (step 6): how many computing peers the first has
    // (the second has the rest); -1 before.
    int count = -1;
  };
  auto counts_of = [&](const Case& cs) {
    std::vector<RegionCount> out;
    if (cs.count < 0) return out;
    const int first = std::countr_zero(cs.mask);
    const int second = std::countr_zero(cs.mask & (cs.mask - 1));
    out.push_back({regions[first], cs.count});
    out.push_back({regions[second], cs.m - cs.count});
    return out;
  };
  // What a case's programs and bounds need, for one cut: the eligible peers of its regions, the
  // regions' members, the span caps those regions impose, and the cheap bound's sorted lists.
  struct Scope {
    bool empty = false;  // some region of the case has no eligible peer
    std::vector<bool> eligible;
    std::vector<std::vector<int>> active;
    std::vector<double> span_cap;
    std::optional<CheapBound> cheap;
  };
  std::map<unsigned, Scope> scopes;
  double scopes_cut = -1;
  auto scope_of = [&](unsigned mask, double cut) -> const Scope& {
    if (cut != scopes_cut) {
      scopes.clear();
      scopes_cut = cut;
    }
    if (auto it = scopes.find(mask); it != scopes.end()) return it->second;
    Scope sc;
    sc.eligible = eligible_for(cut);
    sc.span_cap.assign(n, kInf);
    if (mask) {
      std::vector<bool> inside(n, false);
      for (std::size_t g = 0; g < regions.size() && !sc.empty; ++g) {
        if (!(mask >> g & 1u)) continue;
        std::vector<int> members;
        for (int i : regions[g]) {
          inside[i] = true;
          if (sc.eligible[i]) members.push_back(i);
        }
        if (members.empty()) sc.empty = true;
        for (int j = 0; j < n; ++j) {  // some member computes and streams j's parts over its cap
          if (!p.can_reduce[j]) continue;
          double widest = 0;
          for (int k : members) {
            widest = k == j ? kInf : std::max(widest, p.pair_cap(k, j));
          }
          sc.span_cap[j] = std::min(sc.span_cap[j], widest);
        }
        sc.active.push_back(std::move(members));
      }
      for (int i = 0; i < n; ++i) sc.eligible[i] = sc.eligible[i] && inside[i];
    }
    sc.cheap.emplace(p, sc.eligible);
    return scopes.emplace(mask, std::move(sc)).first->second;
  };
  auto case_bound = [&](const Case& cs, double cut) {
    const Scope& sc = scope_of(cs.mask, cut);
    if (sc.empty || static_cast<int>(sc.active.size()) > cs.m) return -kInf;
    double b = (*sc.cheap)(cs.m);
    // With region counts: the v largest κ of each region, and each region's v-th largest
    // min(d, u).
    const std::vector<RegionCount> counts = counts_of(cs);
    double kappa = counts.empty() ? kInf : 0;
    for (const RegionCount& rc : counts) {
      std::vector<double> k, both;
      for (int i : rc.members) {
        if (!sc.eligible[i]) continue;
        k.push_back(p.kappa[i]);
        both.push_back(p.both(i));
      }
      if (rc.count > static_cast<int>(k.size())) return -kInf;
      std::ranges::sort(k, std::greater<>());
      std::ranges::sort(both, std::greater<>());
      kappa += std::accumulate(k.begin(), k.begin() + rc.count, 0.0);
      b = std::min(b, both[rc.count - 1]);
    }
    b = std::min(b, kappa);
    if (!(b > cut)) return b;  // settled: the sum below costs a division per peer
    // ρ <= Σ_j z_j: every receiver gets at most the spans, each at most 1 (WLOG z_j <= ρ), its
    // download over m − 1 senders, and the caps of this case.
    double spans = 0;
    for (int j = 0; j < n; ++j) {
      if (p.can_reduce[j]) spans += std::min({1.0, p.down[j] / (cs.m - 1), sc.span_cap[j]});
    }
    return std::min(b, spans);
  };
  // An averaging LP grows with n², a case's MIP about with n: at 48 peers four tests cost about as
  // much as the MIP (measured on the held-out compositions), so the limit falls with n².
  const double above_24 = std::max(n, 24) / 24.0;
  const int few = std::max(1, static_cast<int>(kFewRoleSets / (above_24 * above_24)));
  // The role sets of a case with m computing peers that the bounds without an LP leave above the
  // cut, when the case has at most kScanRoleSets sets and at most `few` remain: m of its eligible
  // peers, some in each of its regions, in lexicographic order. nullopt: too many, use the MIP.
  auto few_role_sets = [&](const Scope& sc, int m, const std::vector<RegionCount>& counts,
                           double cut) -> std::optional<std::vector<std::vector<bool>>> {
    std::vector<int> pool;
    for (int i = 0; i < n; ++i) {
      if (sc.eligible[i]) pool.push_back(i);
    }
    const int e = static_cast<int>(pool.size());
    if (m > e) return std::vector<std::vector<bool>>{};
    double count = 1;  // C(e, m)
    for (int i = 0; i < e - m; ++i) count = count * (e - i) / (i + 1);
    if (count > kScanRoleSets + 0.5) return std::nullopt;
    std::vector<std::vector<bool>> sets;
    std::vector<int> left(e - m);  // the pool positions that do not compute, increasing
    for (int i = 0; i < e - m; ++i) left[i] = i;
    for (;;) {
      std::vector<bool> roles = sc.eligible;
      for (int i : left) roles[pool[i]] = false;
      bool every_region = true;
      for (const auto& members : sc.active) {
        every_region = every_region && std::any_of(members.begin(), members.end(), [&](int i) { return roles[i]; });
      }
      for (const RegionCount& rc : counts) {
        every_region = every_region && std::ranges::count_if(rc.members, [&](int i) {
                                         return static_cast<bool>(roles[i]);
                                       }) == rc.count;
      }
      if (every_region && ev.may_reach(roles, cut)) {
        if (static_cast<int>(sets.size()) == few) return std::nullopt;
        sets.push_back(std::move(roles));
      }
      int i = e - m - 1;
      while (i >= 0 && left[i] == m + i) --i;
      if (i < 0) break;
      ++left[i];
      for (int j = i + 1; j < e - m; ++j) left[j] = left[j - 1] + 1;
    }
    return sets;
  };
  std::vector<Case> cases;
  {
    const unsigned masks = regions.empty() ? 1u : (1u << regions.size());
    for (int m = 2; m <= k; ++m) {
      for (unsigned mask = regions.empty() ? 0u : 1u; mask < masks; ++mask) {
        Case cs{m, mask};
        cs.bound = case_bound(cs, cut_of());
        if (cs.bound > cut_of()) cases.push_back(cs);
      }
    }
    std::stable_sort(cases.begin(), cases.end(),
                     [](const Case& a, const Case& b) { return a.bound > b.bound; });
  }
  // Cold, with regions: the nested sets within each proper set of regions whose cases can still
  // beat the incumbent, best bound first. Regions joined by narrow caps often do best apart (one
  // region computing alone escapes the caps), which the chain over all peers never tries; an
  // incumbent found here lets the MIPs of the other cases fail at their root.
  // Warm, the previous roles replace these chains, which would cost a few LPs on every re-solve;
  // but where cases are left for MIPs (the previous roles are far from the new optimum), the
  // chains cost less than MIPs against a weak incumbent.
  const bool chains = !res.warm || !cases.empty();
  if (res.warm && chains) best_nested(capable);
  if (chains && !regions.empty()) {
    const unsigned all = (1u << regions.size()) - 1;
    std::map<unsigned, double> best_of_mask;
    for (const Case& cs : cases) {
      if (cs.mask != all) best_of_mask[cs.mask] = std::max(best_of_mask[cs.mask], cs.bound);
    }
    std::vector<std::pair<double, unsigned>> by_bound;
    for (const auto& [mask, bound] : best_of_mask) by_bound.emplace_back(bound, mask);
    std::stable_sort(by_bound.begin(), by_bound.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [bound, mask] : by_bound) {
      if (!(bound > cut_of())) continue;
      std::vector<int> pool;
      for (std::size_t g = 0; g < regions.size(); ++g) {
        if (mask >> g & 1u) pool.insert(pool.end(), regions[g].begin(), regions[g].end());
      }
      best_nested(pool);
    }
  }
  // Best first: always work on the open case with the highest bound, one MIP at a time, so that
  // the best roles turn up early and raise the cut for every other case. A case is closed once
  // its MIP finds nothing above the cut; each MIP's optimum bounds its case from then on.
  struct Open {
    std::vector<TransportCut> cuts;  // transport cuts its overrated roles needed
    bool closed = false;
    std::unique_ptr<CaseMip> mip;
    std::size_t cuts_in = 0, excluded_in = 0;  // how many of each the loaded MIP has
  };
  std::vector<Open> state(cases.size());
  std::map<unsigned, RelaxationBasis> root_bases;  // per set of regions: the last MIP's root basis
  int budget = max_mips;
  // A case of two regions whose MIP did not settle it (its roles were overrated, or the node
  // budget ran out) is replaced by one case per count of computing peers in its first region
  // (step 6): each inherits its bound and its cuts.
  auto split = [&](std::size_t c) {
    const Case parent = cases[c];
    if (parent.count >= 0 || std::popcount(parent.mask) != 2 || !(parent.bound > cut_of())) {
      return;
    }
    const std::vector<TransportCut> cuts = state[c].cuts;
    state[c].closed = true;
    state[c].mip.reset();
    cases[c].bound = -kInf;
    ++res.region_splits;
    for (int v = 1; v < parent.m; ++v) {
      Case sub = parent;
      sub.count = v;
      sub.bound = std::min(parent.bound, case_bound(sub, cut_of()));
      if (!(sub.bound > cut_of())) continue;
      cases.push_back(sub);
      state.emplace_back().cuts = cuts;
    }
  };
  if (limits.split_regions_first) {
    for (std::size_t c = 0, initial = cases.size(); c < initial; ++c) split(c);
  }
  for (;;) {
    std::size_t pick = cases.size();
    for (std::size_t c = 0; c < cases.size(); ++c) {
      if (state[c].closed) continue;
      if (!(cases[c].bound > cut_of())) {
        state[c].closed = true;  // proven: no such roles beat the incumbent
        state[c].mip.reset();
        cases[c].bound = -kInf;
        continue;
      }
      if (pick == cases.size() || cases[c].bound > cases[pick].bound) pick = c;
    }
    if (pick == cases.size() || budget <= 0) break;
    Case& cs = cases[pick];
    Open& st = state[pick];
    const double cut = cut_of();
    const double cheap = case_bound(cs, cut);
    cs.bound = std::min(cs.bound, cheap);
    if (!(cheap > cut)) continue;
    const Scope& sc = scope_of(cs.mask, cut);
    const std::vector<RegionCount> counts = counts_of(cs);
    if (auto sets = limits.split_regions_first ? std::nullopt : few_role_sets(sc, cs.m, counts, cut)) {
      // Few role sets (all but a few eligible peers compute, or the rest fail the bounds without
      // an LP): each is tested as the incumbent search tests roles, cheaper than a MIP that
      // restates the averaging LP with hundreds of big-M rows.
      for (const std::vector<bool>& roles : *sets) {
        if (std::find(excluded.begin(), excluded.end(), roles) != excluded.end()) continue;
        if (!ev.at_least(roles, cut_of())) continue;
        res.value = ev.value(roles);
        res.computes = roles;
        excluded.push_back(roles);
      }
      ++res.enumerated;
      st.closed = true;
      st.mip.reset();
      cs.bound = -kInf;
      continue;
    }
    --budget;
    if (!st.mip) {
      st.mip = std::make_unique<CaseMip>(p, cs.m, cut, sc.eligible, sc.active, sc.span_cap, counts);
    } else {
      st.mip->tighten(cut, sc.eligible);
    }
    for (; st.cuts_in < st.cuts.size(); ++st.cuts_in) st.mip->add(st.cuts[st.cuts_in]);
    for (; st.excluded_in < excluded.size(); ++st.excluded_in) {
      if (count_set(excluded[st.excluded_in]) == cs.m) st.mip->exclude(excluded[st.excluded_in]);
    }
    const unsigned kind = cs.count >= 0 ? kCounted : 0u;
    const auto plain = root_bases.find(cs.mask);
    const MipSolve got = st.mip->solve(nodes, &root_bases[cs.mask | kind],
                                       kind && plain != root_bases.end() ? &plain->second : nullptr);
    ++res.mips;
    res.nodes += got.outcome.nodes;
    if (got.outcome.infeasible) {
      st.closed = true;
      st.mip.reset();
      cs.bound = -kInf;
      continue;
    }
    // The program's optimum (or its best node when the node budget ran out) bounds every such
    // plan it has not excluded.
    cs.bound = std::min(cs.bound, got.outcome.optimal ? got.value : got.outcome.bound);
    if (!got.outcome.solved) {
      st.closed = true;  // no solution within its node budget: keep the bound
      split(pick);
      continue;
    }
    const bool improves = ev.at_least(got.computes, cut);
    if (improves) {
      res.value = ev.value(got.computes);
      res.computes = got.computes;
    }
    // Either the program overrated these roles (its transport cuts are not all of the LP's), or
    // they are the new incumbent, which it may still rate above the new cut. Either way: exclude
    // them, add the cuts their LP needed (which may rule out their like too), and look again.
    excluded.push_back(got.computes);
    for (const TransportCut& tc : ev.cuts(got.computes)) {
      bool dup = static_cast<int>(st.cuts.size()) >= kMaxCaseCuts;
      for (const TransportCut& have : st.cuts) {
        dup = dup || (have.returner == tc.returner && have.receivers == tc.receivers);
      }
      if (!dup) st.cuts.push_back(tc);
    }
    if (!improves && !got.outcome.optimal) st.closed = true;  // node budget spent: keep its bound
    if (!improves) split(pick);  // (cs and st may not outlive this)
  }
  // A case proven against the cut is bounded by it; one left open by its last bound.
  res.bound = res.value;
  for (const Case& cs : cases) res.bound = std::max(res.bound, cs.bound);
  if (better > kBetter) res.bound = std::max(res.bound, cut_of());
  res.exact = res.bound <= res.value * (1 + kBetter);
  if (res.exact) res.bound = res.value;
  if (!res.computes.empty()) describe_roles();
  res.evaluations = ev.evaluations();
  res.warm_dropped = ev.warm_dropped();
  return res;
}

void add_symmetry_breaking(const ScaledProblem& p, const std::vector<int>& c, Model& model) {
  std::vector<int> last_of_class;  // the latest peer of each class of interchangeable peers
  for (int i = 0; i < p.n; ++i) {
    if (!c[i]) continue;
    bool placed = false;
    for (int& last : last_of_class) {
      if (p.interchangeable(last, i)) {
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
}

}  // namespace swarmlab::core::planner::detail
