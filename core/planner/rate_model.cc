// The averaging LP with the roles fixed, on its aggregated form (README.md, "The averaging LP").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "core/planner/glpk_model.h"
#include "core/planner/lp_model.h"
#include "core/planner/max_flow.h"

namespace swarmlab::core::planner::detail {
namespace {

// One upper bound on what pair j → i returns, chosen where it is tightest at a solution.
enum class Piece : std::uint8_t {
  Span,         // g_ji <= z_j
  Cap,          // g_ji <= t_ji (j sends no parts to i)
  CapLessParts  // g_ji <= t_ji − z_i (j computes and sends i's parts on the same pair)
};
struct PieceCut {
  std::vector<int> receivers, uploaders;
  struct Edge {
    int reducer, receiver;
    Piece piece;
  };
  std::vector<Edge> edges;
};

// Sums repeated columns: GLPK takes each (row, column) once. By column, each sum in the order
// the terms came (a stable sort, no map: this runs for every row the LP builds).
std::vector<std::pair<int, double>> merged(std::vector<std::pair<int, double>> terms) {
  std::ranges::stable_sort(terms, {}, &std::pair<int, double>::first);
  std::vector<std::pair<int, double>> out;
  out.reserve(terms.size());
  for (std::size_t k = 0; k < terms.size();) {
    double sum = 0;
    std::size_t end = k;
    for (; end < terms.size() && terms[end].first == terms[k].first; ++end) sum += terms[end].second;
    if (sum != 0) out.emplace_back(terms[k].first, sum);
    k = end;
  }
  return out;
}

// The largest span reducer j can have with these roles (m of them computing), before ρ's own
// bound: its download over its m − c_j senders, what each computing peer uploads and carries to it
// over their pair, and, for a reducer that does not compute (it only returns its span, WLOG no
// faster than its widest pair to a computing peer), that pair. Capacities in the caller's units.
template <class Down, class Up, class Cap>
double span_limit(int n, int j, int m, const std::vector<bool>& computes, Down down, Up up,
                  Cap cap) {
  double limit = down(j) / (m - (computes[j] ? 1 : 0));
  double widest = 0;
  for (int k = 0; k < n; ++k) {
    if (k == j || !computes[k]) continue;
    limit = std::min({limit, up(k), cap(k, j)});
    widest = std::max(widest, cap(j, k));
  }
  return computes[j] ? limit : std::min(limit, widest);
}

// Cut rounds before giving up on the aggregated form (then the per-pair LP decides). Each round
// adds the transport cut of one set of receivers; a few are typical with pair caps, none
// without.
constexpr int kMaxRounds = 60;

}  // namespace

RateResult averaging_lp(const ScaledProblem& p, const std::vector<bool>& computes,
                        const AveragingLpIo& io) {
  TermOff quiet;
  const int n = p.n;
  RateResult res;
  const int m = count_set(computes);
  const double beta = slowest_computing_link(p, computes);
  if (m < 2) {
    res.ok = res.certified = true;
    res.rho = res.lower = kInf;
    return res;
  }
  bool any_reducer = false;
  for (int j = 0; j < n; ++j) any_reducer = any_reducer || p.can_reduce[j];
  if (!(beta > 0) || !any_reducer) {  // a computing peer cannot send or receive: nothing averages
    res.ok = res.certified = true;
    return res;
  }

  // Units of beta (the slowest computing peer's min(d, u)), so that ρ <= 1; clamp what cannot
  // bind any more (a peer never needs more than 2n, a pair more than 2).
  const double clamp = 2.0 * n;
  std::vector<double> d(n), u(n);
  for (int i = 0; i < n; ++i) {
    d[i] = std::min(p.down[i] / beta, clamp);
    u[i] = std::min(p.up[i] / beta, clamp);
  }
  auto cap = [&](int i, int j) {
    const double t = p.pair_cap(i, j) / beta;
    return t >= 2 ? kInf : t;
  };
  auto c = [&](int i) { return computes[i] ? 1 : 0; };

  // Columns: ρ, Z = Σ z, then per peer z_j (reducers), G_i (returns received by a computing
  // peer from the others), h_j (returns a reducer uploads to the others).
  Model model;
  LpItems items;  // what each row and column stands for, for warm starts
  using K = LpItemKind;
  std::vector<int> z(n, 0), G(n, 0), h(n, 0);
  std::vector<double> zub(n, 0);
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    // WLOG z_j <= ρ <= 1.
    const double limit = span_limit(n, j, m, computes, [&](int i) { return d[i]; },
                                    [&](int k) { return u[k]; }, cap);
    zub[j] = std::max(std::min(1.0, limit), 0.0);
  }
  double zsum = 0;
  for (double v : zub) zsum += v;
  const int rho = model.col(0, 1.0, 1.0);
  const int Z = model.col(0, zsum);
  items.col(rho, {K::Rate});
  items.col(Z, {K::SpanSum});
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    z[j] = model.col(0, zub[j]);
    items.col(z[j], {K::Span, j});
  }
  for (int i = 0; i < n; ++i) {
    if (!computes[i]) continue;
    G[i] = model.col(0, std::min(1.0, d[i]));
    items.col(G[i], {K::Received, i});
  }
  std::vector<double> hv_ub(n, 0);
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    hv_ub[j] = std::min(u[j], (m - c(j)) * zub[j]);
    h[j] = model.col(0, hv_ub[j]);
    items.col(h[j], {K::Returned, j});
  }

  {  // Z = Σ z
    const int r = model.row_eq(0);
    items.row(r, {K::SpanSumDefinition});
    model.coef(r, Z, 1);
    for (int j = 0; j < n; ++j) {
      if (z[j]) model.coef(r, z[j], -1);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (z[i]) {  // download: parts of i's span from m − c_i senders, returns from the others
      const int r = model.row_le(d[i]);
      items.row(r, {K::Download, i});
      model.coef(r, z[i], m - c(i));
      if (G[i]) model.coef(r, G[i], 1);
    }
    if (computes[i]) {  // upload: i's parts of every other span, and i's returns
      const int r = model.row_le(u[i]);
      items.row(r, {K::Upload, i});
      model.coef(r, Z, 1);
      if (z[i]) model.coef(r, z[i], -1);
      if (h[i]) model.coef(r, h[i], 1);
    }
    if (h[i]) {  // i returns its span to at most m − c_i others
      const int r = model.row_le(0);
      items.row(r, {K::ReturnsLimit, i});
      model.coef(r, h[i], 1);
      model.coef(r, z[i], -(m - c(i)));
    }
    if (G[i]) {
      // Receiver: ρ <= its own span (free, local) + what the others return.
      const int r = model.row_le(0);
      items.row(r, {K::Receives, i});
      model.coef(r, rho, 1);
      model.coef(r, G[i], -1);
      if (z[i]) model.coef(r, z[i], -1);
      // No other reducer returns more than its span: G_i <= Σ_{j≠i} z_j (the single-receiver
      // transport cut with every piece z_j).
      const int rs = model.row_le(0);
      items.row(rs, {K::ReceivesSpans, i});
      model.coef(rs, G[i], 1);
      model.coef(rs, Z, -1);
      if (z[i]) model.coef(rs, z[i], 1);
    }
  }
  {  // what the receivers get is what the reducers return
    const int r = model.row_le(0);
    items.row(r, {K::Balance});
    for (int i = 0; i < n; ++i) {
      if (G[i]) model.coef(r, G[i], 1);
      if (h[i]) model.coef(r, h[i], -1);
    }
  }

  // Transport cuts (README.md, "The averaging LP"): for receivers T, every reducer j returns to
  // them at most H_j = min(h_j, Σ_{i∈T, i≠j} e_ji) with e_ji = min(z_j, t_ji − [j computes]·z_i)
  // on a capped pair and z_j otherwise.
  std::vector<std::pair<int, TransportCut>> exportable;  // (row, cut) for rows that are cuts
  if (!p.cap.empty()) {
    // Cheap seeds, one row per peer. A reducer returns to the others at most what their pairs
    // carry: h_j <= Σ_{uncapped i} z_j + Σ_{capped i} (t_ji − [j computes]·z_i) (the transport
    // cut of all receivers, with a minimum of sums for each reducer). A receiver gets at most
    // G_i <= Σ_{uncapped j} z_j + Σ_{capped j} (t_ji − [j computes]·z_i).
    //
    // Each row's terms are written in column order with repeated columns summed, as merged()
    // would leave them (z columns by peer, then G, then h), without sorting: these 2n rows cost n²
    // pairs on every averaging LP, and sorting them was most of building a warm-started one.
    std::vector<std::pair<int, double>> terms;
    auto seed_row = [&](double caps, int repeated, double times, int last) {
      if (times != 0) {
        const auto at = std::ranges::lower_bound(terms, repeated, {}, &std::pair<int, double>::first);
        terms.insert(at, {repeated, times});
      }
      terms.emplace_back(last, 1.0);
      const int r = model.row_le(caps);
      for (const auto& [col, v] : terms) model.coef(r, col, v);
      return r;
    };
    for (int j = 0; j < n; ++j) {
      if (!z[j]) continue;
      terms.clear();
      double caps = 0;
      int uncapped = 0;
      bool any = false;
      for (int i = 0; i < n; ++i) {
        if (i == j || !G[i]) continue;
        if (cap(j, i) == kInf) {
          ++uncapped;
          continue;
        }
        any = true;
        caps += cap(j, i);
        if (computes[j] && z[i]) terms.emplace_back(z[i], 1.0);
      }
      if (!any) continue;
      const int r = seed_row(caps, z[j], -uncapped, h[j]);
      items.row(r, {K::ReturnsSeed, j});
      exportable.push_back({r, {{}, j, {}}});
    }
    for (int i = 0; i < n; ++i) {
      if (!G[i]) continue;
      terms.clear();
      double caps = 0;
      int parts = 0;
      bool any = false;
      for (int j = 0; j < n; ++j) {
        if (j == i || !z[j]) continue;
        if (cap(j, i) == kInf) {
          terms.emplace_back(z[j], -1.0);
          continue;
        }
        any = true;
        caps += cap(j, i);
        if (computes[j] && z[i]) ++parts;
      }
      if (any) items.row(seed_row(caps, z[i], parts, G[i]), {K::ReceivesSeed, i});
    }
  }

  glp_prob* lp = model.load();
  // The best consistent split is a feasible point of the LP: when the aggregated form's bound
  // meets it, that is the optimum, however the totals would split.
  const SplitResult split = io.split ? *io.split : best_split(p, computes);
  const double floor = split.ok ? split.total / beta : 0;
  auto met = [&] { return glp_get_col_prim(lp, rho) <= floor * (1 + 1e-9); };
  auto export_cuts = [&] {  // the cuts that bind at the optimum, for the roles program
    auto value = [&](int col) { return col ? std::max(0.0, glp_get_col_prim(lp, col)) : 0.0; };
    for (const auto& [row, cut] : exportable) {
      if (!(std::abs(glp_get_row_dual(lp, row)) > 1e-12)) continue;
      TransportCut out = cut;
      if (out.returner < 0) {
        for (int j = 0; j < n; ++j) {
          if (!z[j]) continue;
          double through = 0;
          for (int i : out.receivers) {
            if (i == j) continue;
            double limit = value(z[j]);
            if (cap(j, i) != kInf) {
              limit = std::min(limit, cap(j, i) - (computes[j] && z[i] ? value(z[i]) : 0.0));
            }
            through += std::max(0.0, limit);
          }
          if (value(h[j]) <= through) out.uploaders.push_back(j);
        }
      }
      io.cuts->push_back(std::move(out));
    }
  };
  // The exact phase and the cut rounds grow the loaded LP: a column in [0, ub], a row <= hi.
  auto add_col = [&](double ub) {
    const int col = glp_add_cols(lp, 1);
    Model::set_col_bounds(lp, col, 0, ub);
    return col;
  };
  auto add_row_le = [&](const std::vector<std::pair<int, double>>& terms, double hi) {
    return Model::add_row_le(lp, merged(terms), hi);
  };

  // Check that the totals split into pairs: a transport problem from reducers (supply h_j) to
  // receivers (demand G_i), pair j → i carrying at most e_ji.
  std::vector<int> reducer_node(n, -1), receiver_node(n, -1);
  int nodes = 2;  // 0 = source, 1 = sink
  for (int j = 0; j < n; ++j) {
    if (z[j]) reducer_node[j] = nodes++;
  }
  for (int i = 0; i < n; ++i) {
    if (G[i]) receiver_node[i] = nodes++;
  }
  std::vector<double> zv(n, 0), Gv(n, 0), hv(n, 0);
  auto read = [&] {
    for (int i = 0; i < n; ++i) {
      zv[i] = z[i] ? std::max(0.0, glp_get_col_prim(lp, z[i])) : 0;
      Gv[i] = G[i] ? std::max(0.0, glp_get_col_prim(lp, G[i])) : 0;
      hv[i] = h[i] ? std::max(0.0, glp_get_col_prim(lp, h[i])) : 0;
    }
  };
  // The rate pair j → i can return, and which bound sets it.
  auto pair_limit = [&](int j, int i, Piece* piece) {
    double limit = zv[j];
    *piece = Piece::Span;
    const double t = cap(j, i);
    if (t != kInf) {
      const bool parts = computes[j] && z[i];
      const double rest = parts ? t - zv[i] : t;
      if (rest < limit) {
        limit = rest;
        *piece = parts ? Piece::CapLessParts : Piece::Cap;
      }
    }
    return std::max(0.0, limit);
  };
  // A cut with one piece per pair, as chosen at the current solution (tight there).
  auto piece_cut = [&](const std::vector<int>& T) {
    PieceCut cut;
    cut.receivers = T;
    for (int j = 0; j < n; ++j) {
      if (!z[j]) continue;
      double through = 0;
      std::vector<PieceCut::Edge> edges;
      for (int i : T) {
        if (i == j) continue;
        Piece piece;
        through += pair_limit(j, i, &piece);
        edges.push_back({j, i, piece});
      }
      if (edges.empty()) continue;
      if (hv[j] <= through) {
        cut.uploaders.push_back(j);
      } else {
        cut.edges.insert(cut.edges.end(), edges.begin(), edges.end());
      }
    }
    return cut;
  };
  // The cut's row: its terms and its bound, returned together.
  struct Row {
    std::vector<std::pair<int, double>> terms;
    double rhs = 0;
  };
  auto piece_row = [&](const PieceCut& cut) {
    std::map<int, double> coef;
    Row row;
    for (int i : cut.receivers) coef[G[i]] += 1;
    for (int j : cut.uploaders) coef[h[j]] -= 1;
    for (const auto& e : cut.edges) {
      switch (e.piece) {
        case Piece::Span: coef[z[e.reducer]] -= 1; break;
        case Piece::Cap: row.rhs += cap(e.reducer, e.receiver); break;
        case Piece::CapLessParts:
          row.rhs += cap(e.reducer, e.receiver);
          coef[z[e.receiver]] += 1;
          break;
      }
    }
    row.terms.assign(coef.begin(), coef.end());
    return row;
  };

  // Whether pair j → i's cap can ever bind: it carries z_j of returns at most, plus z_i of parts
  // when j computes.
  auto binds = [&](int j, int i) {
    return cap(j, i) < zub[j] + (computes[j] && z[i] ? zub[i] : 0.0);
  };
  // A new s or H column starts at the value its tightest bound gives at the current point: basic,
  // with that bound's row nonbasic (or an s at zero, its row basic, where the span binds). The
  // basis stays dual feasible (these columns cost nothing), so the dual simplex only repairs the
  // rows they enter, instead of raising each from zero.
  auto basic_on = [&](int col, int row) {
    glp_set_col_stat(lp, col, GLP_BS);
    glp_set_row_stat(lp, row, GLP_NU);
  };
  // σ_ji <= min(z_j, t_ji − [j computes]·z_i): what capped pair j → i can return, made the first
  // time an exact cut needs it. It is written σ_ji = z_j − s_ji with a shortfall column s_ji >= 0,
  // so that σ_ji <= z_j is a bound, not a row: one row per pair, z_j − s_ji (+ z_i) <= t_ji. σ >= 0
  // is not kept: σ only bounds returns from above, so a smaller σ never helps the LP (and the span
  // bounds keep t_ji − z_i >= 0 anyway). 479 → 391 rows and 95 → 67 pivots on one 24-peer LP.
  std::vector<std::vector<int>> shortfall(n);
  // Appends −σ_ji = s_ji − z_j to `terms`.
  auto minus_pair_return = [&](int j, int i, std::vector<std::pair<int, double>>& terms) {
    if (shortfall[j].empty()) shortfall[j].assign(n, 0);
    int& s = shortfall[j][i];
    if (!s) {
      s = add_col(kInf);
      items.col(s, {K::PairShortfall, j, i});
      std::vector<std::pair<int, double>> row{{z[j], 1.0}, {s, -1.0}};
      if (computes[j] && z[i]) row.emplace_back(z[i], 1.0);
      const int by_cap = add_row_le(row, cap(j, i));
      items.row(by_cap, {K::PairByCap, j, i});
      Piece piece;
      pair_limit(j, i, &piece);
      if (piece != Piece::Span) basic_on(s, by_cap);  // else s = 0 at its bound, its row basic
    }
    terms.emplace_back(s, 1.0);
    terms.emplace_back(z[j], -1.0);
  };
  // The exact transport cut for T: Σ_T G_i <= Σ_j H_j, H_j <= h_j, H_j <= Σ_{i∈T, i≠j} e_ji.
  auto exact_cut = [&](const std::vector<int>& T) {
    const int receivers = items.set(T);
    std::vector<std::pair<int, double>> main;
    for (int i : T) main.emplace_back(G[i], 1.0);
    for (int j = 0; j < n; ++j) {
      if (!z[j]) continue;
      std::vector<std::pair<int, double>> terms;
      int spans = 0;
      double through = 0;
      for (int i : T) {
        if (i == j) continue;
        Piece piece;
        through += pair_limit(j, i, &piece);
        if (!binds(j, i)) {
          ++spans;
        } else {
          minus_pair_return(j, i, terms);
        }
      }
      if (spans == 0 && terms.empty()) continue;
      if (spans) terms.emplace_back(z[j], -spans);
      const int H = add_col(hv_ub[j]);
      main.emplace_back(H, -1.0);
      const int by_returns = add_row_le({{H, 1.0}, {h[j], -1.0}}, 0);
      terms.emplace_back(H, 1.0);
      const int by_pairs = add_row_le(terms, 0);
      basic_on(H, hv[j] <= through ? by_returns : by_pairs);
      items.col(H, {K::CutReturn, j, -1, receivers});
      items.row(by_returns, {K::CutByReturns, j, -1, receivers});
      items.row(by_pairs, {K::CutByPairs, j, -1, receivers});
    }
    const int cut_row = add_row_le(main, 0);
    items.row(cut_row, {K::Cut, -1, -1, receivers});
    exportable.push_back({cut_row, {T, -1, {}}});
  };

  std::map<std::vector<int>, int> seen;  // receiver sets cut so far, and how often
  // The exact phase, with pair caps when the first solve does not settle it: every capped pair's
  // σ, each receiver's exact bound G_i <= Σ_{uncapped j} z_j + Σ_{capped j} σ_ji, and the exact
  // cut for every group of receivers reached through the same capped pairs (a region's
  // receivers) — the cuts the loop would otherwise find one at a time.
  bool exact_phase = false;
  auto add_exact_phase = [&] {
    exact_phase = true;
    std::map<std::vector<int>, std::vector<int>> groups;
    for (int i = 0; i < n; ++i) {
      if (!G[i]) continue;
      std::vector<int> from;
      std::vector<std::pair<int, double>> terms{{G[i], 1.0}};
      for (int j = 0; j < n; ++j) {
        if (j == i || !z[j]) continue;
        if (!binds(j, i)) {
          terms.emplace_back(z[j], -1.0);
        } else {
          from.push_back(j);
          minus_pair_return(j, i, terms);
        }
      }
      if (from.empty()) continue;
      items.row(add_row_le(terms, 0), {K::ReceivesExact, i});
      groups[from].push_back(i);
    }
    for (auto& [from, T] : groups) {
      if (T.size() > 1) {
        exact_cut(T);
        seen[T] = 2;
      }
    }
  };
  auto keep_basis = [&](LpBasis* out) {
    if (!out) return;
    record_basis(lp, items, out);
    out->exact_phase = exact_phase;
  };
  auto finish = [&] {
    res.ok = true;
    keep_basis(io.finish);
  };

  // A warm start from an LP that needed the exact phase builds it before the first solve, with
  // the exact cuts that LP had (on the receivers that still compute).
  if (io.start && io.start->exact_phase && !p.cap.empty()) {
    add_exact_phase();
    for (const auto& [key, status] : io.start->status) {
      const LpItem item = LpItem::of(key);
      if (item.kind != K::Cut || item.set < 0) continue;
      std::vector<int> T;
      for (int i : io.start->sets[item.set]) {
        if (i < n && G[i]) T.push_back(i);
      }
      if (T.empty() || seen.count(T)) continue;
      exact_cut(T);
      seen[T] = 1;
    }
  }
  const bool warm = start_basis(lp, items, io.start);
  // From a previous plan's basis a re-solve takes a few dozen pivots (0–54 on 30 swarms of 64
  // peers). Where the peer that came or went mattered, that basis fits badly: two such re-solves,
  // carrying the exact phase, took 850 and 970 pivots, 8× a cold solve. Past a limit the warm
  // start is dropped for a cold solve.
  const int warm_pivots = io.start ? std::max(150, glp_get_num_rows(lp) / 8) : 0;
  if (!(warm && basis_is_optimal(lp)) && !solve_simplex(lp, /*dual=*/false, warm_pivots)) {
    if (!io.start) return res;
    AveragingLpIo cold = io;
    cold.start = nullptr;
    RateResult restarted = averaging_lp(p, computes, cold);
    restarted.warm_dropped = true;
    return restarted;
  }
  res.rounds = 1;
  res.lower = floor * beta;
  if (met()) {
    finish();
    res.certified = true;
    res.rho = res.lower = glp_get_col_prim(lp, rho) * beta;
    if (io.cuts) export_cuts();
    return res;
  }
  // A caller that only asks whether ρ reaches io.stop_below has its answer once the optimum is
  // below it: cuts only lower it further.
  auto below = [&] { return glp_get_col_prim(lp, rho) * beta < io.stop_below; };
  auto stop = [&] {
    res.ok = true;
    if (exact_phase) keep_basis(io.stopped);
    res.rho = glp_get_col_prim(lp, rho) * beta;
    if (io.cuts) export_cuts();  // valid; they bind at this solution
    return res;
  };
  if (below()) return stop();
  if (!p.cap.empty() && !exact_phase) {
    read();
    add_exact_phase();
    ++res.rounds;
    if (!solve_simplex(lp, /*dual=*/true)) return res;
  }
  for (;;) {
    if (met()) {
      res.certified = true;
      break;
    }
    if (below()) return stop();
    read();
    // What each receiver needs from the others (its own span is local) and what each reducer
    // can upload in returns beyond its parts: the LP point is realisable iff this transport
    // problem is feasible (its G_i and h_j may exceed the needs, which is harmless).
    const double rho_v = glp_get_col_prim(lp, rho);
    const double Z_v = glp_get_col_prim(lp, Z);
    double demand = 0;
    MaxFlow flow(nodes);
    for (int j = 0; j < n; ++j) {
      if (reducer_node[j] < 0) continue;
      const double parts = computes[j] ? Z_v - zv[j] : 0;
      flow.add_edge(0, reducer_node[j], u[j] - parts);
    }
    for (int j = 0; j < n; ++j) {
      if (reducer_node[j] < 0) continue;
      for (int i = 0; i < n; ++i) {
        if (i == j || receiver_node[i] < 0) continue;
        Piece piece;
        flow.add_edge(reducer_node[j], receiver_node[i], pair_limit(j, i, &piece));
      }
    }
    for (int i = 0; i < n; ++i) {
      if (receiver_node[i] < 0) continue;
      const double need = std::max(0.0, rho_v - zv[i]);
      demand += need;
      flow.add_edge(receiver_node[i], 1, need);
    }
    constexpr double kEps = 1e-12;
    const double moved = flow.run(0, 1, kEps);
    if (moved >= demand * (1 - 1e-9) - 1e-12 * n) {
      res.certified = true;
      break;
    }
    if (res.rounds >= kMaxRounds) break;

    // A minimum cut: the receivers T off the source side cannot all get their G_i. The first time
    // a set shows up it gets the exact cut; after that (rounding), a cut with one piece per pair,
    // tight at this solution.
    const std::vector<bool> side = flow.source_side(0, kEps);
    std::vector<int> T;
    for (int i = 0; i < n; ++i) {
      if (receiver_node[i] >= 0 && !side[receiver_node[i]]) T.push_back(i);
    }
    if (T.empty()) break;
    const int times = seen[T]++;
    if (times == 0) {
      exact_cut(T);
    } else {
      const Row row = piece_row(piece_cut(T));
      exportable.push_back({Model::add_row_le(lp, row.terms, row.rhs), {T, -1, {}}});
    }
    ++res.rounds;
    if (!solve_simplex(lp, /*dual=*/true)) return res;
  }
  finish();
  res.rho = glp_get_col_prim(lp, rho) * beta;
  if (res.certified) res.lower = res.rho;
  if (io.cuts && res.certified) export_cuts();
  return res;
}

double pair_cap_bound(const ScaledProblem& p, const std::vector<bool>& computes) {
  // Without caps the compact model's bounds already say what the spans can (and this costs n·m).
  if (p.cap.empty()) return kInf;
  const int n = p.n;
  const int m = count_set(computes);
  if (m < 2) return kInf;
  // The largest span each reducer can have, as in averaging_lp.
  std::vector<double> span(n, 0);
  double all_spans = 0;
  for (int j = 0; j < n; ++j) {
    if (!p.can_reduce[j]) continue;
    span[j] = std::max(0.0, span_limit(n, j, m, computes, [&](int i) { return p.down[i]; },
                                       [&](int k) { return p.up[k]; },
                                       [&](int a, int b) { return p.pair_cap(a, b); }));
    all_spans += span[j];
  }
  // ρ <= Σ z (a receiver gets at most every span), and for each computing receiver ρ <= z_i +
  // Σ_{j≠i} min(z_j, t_ji).
  double bound = all_spans;
  for (int i = 0; i < n; ++i) {
    if (!computes[i]) continue;
    double gets = span[i];
    for (int j = 0; j < n; ++j) {
      if (j != i && p.can_reduce[j]) gets += std::min(span[j], p.pair_cap(j, i));
    }
    bound = std::min(bound, gets);
  }
  return bound;
}

}  // namespace swarmlab::core::planner::detail
