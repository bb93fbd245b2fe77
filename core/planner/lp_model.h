#pragma once
// Internal to the planner: the scaled problem and the models solved on it. planner.cc validates
// the input and assembles the Plan; everything here works in scaled rate units.
#include <glpk.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "core/planner/planner.h"

namespace swarmlab::core::planner::detail {

// How many flags are set (peers computing, capable, excluded).
inline int count_set(const std::vector<bool>& v) {
  int n = 0;
  for (bool b : v) n += b ? 1 : 0;
  return n;
}

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
  std::vector<bool> can_reduce;          // not client mode, or reachable by every computing peer
  std::vector<std::vector<int>> routes;  // as PlannerInput::routes
  std::vector<double> relay_both;        // per relay: min(download, upload), scaled
  std::vector<int> relay_member;         // per relay: the peer it also is, or -1
  std::vector<std::vector<double>> cap;  // t_ij scaled; +inf = none; empty = no finite cap at all
  std::vector<std::pair<int, int>> closed_pairs;  // (i, j) with t_ij = 0: nothing passes i → j
  bool compute_term = true;              // Objective::StepsPerSecond

  double pair_cap(int i, int j) const {
    return cap.empty() ? std::numeric_limits<double>::infinity() : cap[i][j];
  }
  // Peers i and k are interchangeable: swapping them maps every plan to one of equal value (the
  // roles searches break this symmetry).
  bool interchangeable(int i, int k) const;
  double both(int i) const { return down[i] < up[i] ? down[i] : up[i]; }  // min(d_i, u_i)
};

// min(d_i, u_i) of the slowest computing peer, which bounds ρ; +∞ when nobody computes.
inline double slowest_computing_link(const ScaledProblem& p, const std::vector<bool>& computes) {
  double beta = std::numeric_limits<double>::infinity();
  for (int i = 0; i < p.n; ++i) {
    if (computes[i]) beta = std::min(beta, p.both(i));
  }
  return beta;
}

// Validated input → scaled problem (defined in planner.cc).
ScaledProblem scale(const PlannerInput& in, const PlannerOptions& opt);

// --- Warm starts of the planner's LPs (lp_basis.cc) ------------------------------------------

// What one row or column of an LP stands for: its kind and the peers it belongs to (indices into
// the problem it was built for). The averaging LP's cut loop rounding rows and the split's rows
// of relays that are not peers have none.
enum class LpItemKind : std::uint8_t {
  None,  // stands for nothing that outlives its solve
  // The averaging LP's columns: ρ, Z, z_j, G_i, h_j, the shortfall s_ji = z_j − σ_ji of a capped
  // pair (a = j, b = i), and H_j of an exact cut (a = j, `set` = the cut's receivers).
  Rate, SpanSum, Span, Received, Returned, PairShortfall, CutReturn,
  // Its rows, one kind per family of constraints (README.md, "The averaging LP").
  SpanSumDefinition, Download, Upload, ReturnsLimit, Receives, ReceivesSpans, Balance,
  ReturnsSeed, ReceivesSeed, PairByCap, ReceivesExact, Cut, CutByReturns, CutByPairs,
  // The split's columns w_j and W, and its rows (README.md, "Fractions: the split real links
  // carry").
  Share, ShareSum, ShareSumDefinition, PeerLoad, PairLoad
};
// What one row or column stands for: its kind, the peers it belongs to, and for the rows and
// columns of an exact cut its receivers, as an index into a table of receiver sets (the LP's
// LpItems::sets, or a basis's LpBasis::sets). Matched as one integer key that packs kind, a + 1,
// b + 1 and set + 1 from the high bits down: its order is that of (kind, a, b, set), and matching
// a basis is a sort and a forward search over integers (comparing the items themselves, with
// their receiver sets, was a sixth of a warm re-solve).
struct LpItem {
  LpItemKind kind = LpItemKind::None;
  int a = -1, b = -1;
  int set = -1;
  // 0 for None, and for peers or sets beyond what the key holds (2^18 − 2 peers, 2^20 − 1 sets):
  // such an item is not matched, it starts fresh.
  std::uint64_t key() const;
  static LpItem of(std::uint64_t key);
};
// The items of a loaded LP by GLPK index (1-based; key 0 where untagged), and its receiver sets.
class LpItems {
 public:
  void row(int index, const LpItem& item) { tag(rows_, index, item.key()); }
  void col(int index, const LpItem& item) { tag(cols_, index, item.key()); }
  std::uint64_t row(int index) const { return at(rows_, index); }
  std::uint64_t col(int index) const { return at(cols_, index); }
  // The index of `receivers` (ascending) in this LP's set table, added the first time.
  int set(const std::vector<int>& receivers);
  const std::vector<std::vector<int>>& sets() const { return sets_; }

 private:
  static void tag(std::vector<std::uint64_t>& v, int index, std::uint64_t key) {
    if (static_cast<int>(v.size()) <= index) v.resize(index + 1, 0);
    v[index] = key;
  }
  static std::uint64_t at(const std::vector<std::uint64_t>& v, int index) {
    return index < static_cast<int>(v.size()) ? v[index] : 0;
  }
  std::vector<std::uint64_t> rows_, cols_;
  std::vector<std::vector<int>> sets_;
};
// An LP's basis at its optimum, by item key (GLPK statuses: GLP_BS, GLP_NL, ...), sorted by key;
// the keys' set indices point into `sets`, kept in lexicographic order, so that the basis's cuts
// come in the order of their receivers. A later LP over a similar peer set starts from it
// (README.md, "Warm starts").
struct LpBasis {
  std::vector<std::pair<std::uint64_t, int>> status;
  std::vector<std::vector<int>> sets;
  bool exact_phase = false;  // an averaging LP that needed its exact phase (σ and exact cuts)
};
// The final bases of a plan's averaging LP and split, for the next solve.
struct PlanBases {
  LpBasis averaging, split;
};

// Sets a loaded LP's starting basis. From `start`, when given and it makes a valid, nonsingular
// basis: shared items keep their status, new rows are basic and new columns at their lower
// bound, then the count of basic variables is repaired; such an LP is not scaled (it needs few
// pivots, fewer than GLPK's scaling pass costs, and the planner's rows are normalised already).
// Otherwise the LP is scaled and starts from GLPK's advanced basis. True when it starts from
// `start` (its basis then factorised).
bool start_basis(glp_prob* lp, const LpItems& items, const LpBasis* start);
// `lp`'s current statuses, by item (replacing what `out` held; exact_phase is left as it was).
void record_basis(glp_prob* lp, const LpItems& items, LpBasis* out);
// The same bases for another peer numbering: `to[i]` is old peer i's new index, or -1 when it is
// gone (its items are dropped, and it leaves the cuts' receiver sets).
PlanBases reindexed(const PlanBases& bases, const std::vector<int>& to);

// --- The averaging LP with the roles fixed (rate_model.cc) ----------------------------------

// A transport cut found by the averaging LP, valid for any roles (README.md, "The roles
// search"). With returner < 0: what the receivers T get from the other reducers is at most
// Σ_j min(h_j, Σ_{i∈T, i≠j} e_ji), e_ji = min(z_j, t_ji − [j computes]·z_i) being what pair
// j → i can return. With returner = j: j's returns h_j are at most Σ_i e_ji over the receivers
// (every peer that might compute, for other roles).
//
// For the roles program the minimum is resolved as it was at the LP's optimum: the reducers in
// `uploaders` count with h_j, the others with their pairs (either is a valid upper bound).
struct TransportCut {
  std::vector<int> receivers;
  int returner = -1;
  std::vector<int> uploaders;
};

struct RateResult {
  bool ok = false;
  // rho is the LP's optimum (the aggregated model's optimum was split into per-pair returns, or
  // met the best split); false when the cut loop ran out of rounds, was not asked to run, or
  // stopped below io.stop_below (then the optimum lies in [lower, rho]).
  bool certified = false;
  double rho = 0;    // max averaging rate, scaled units; +inf when fewer than two peers compute
  double lower = 0;  // a feasible rate: the best consistent split (rho when certified)
  int rounds = 0;    // LP solves
  bool warm_dropped = false;  // the start basis fit so badly that the LP started over cold
};

struct SplitResult;
// What a caller may hand to the averaging LP or take back from it; all optional.
struct AveragingLpIo {
  const SplitResult* split = nullptr;         // these roles' best_split, when already solved
  const LpBasis* start = nullptr;             // a similar LP's basis (peers numbered as in p)
  std::vector<TransportCut>* cuts = nullptr;  // out: transport cuts binding at the optimum
  LpBasis* finish = nullptr;                  // out: this LP's basis at its optimum
  // Stop, uncertified, once the optimum is known to lie below this rate (scaled units), for a
  // caller that only asks whether the rate reaches it; rho is then an upper bound below it.
  double stop_below = 0;
  // out: the basis where it stopped, when that was after the exact phase (a later LP of these
  // roles resumes from it; before the exact phase there is little to resume).
  LpBasis* stopped = nullptr;
};

// The literal averaging LP (docs/dedloc.md §2) with the roles fixed, solved exactly on its
// aggregated form: per-peer totals of returns instead of per-pair ones, plus transport cuts
// found by max-flow until the totals can be split into pairs (README.md, "The averaging LP").
// With io.stop_below = +inf it stops after the first solve of the aggregated form: rho is then an
// upper bound and lower a lower bound (cheap; exact when they meet).
RateResult averaging_lp(const ScaledProblem& p, const std::vector<bool>& computes,
                        const AveragingLpIo& io = {});
// An upper bound on that LP's rate without solving it, from its span bounds and pair caps
// (README.md, "The roles search"): every span z_j is at most what each computing peer can stream
// to j, and every computing receiver gets at most its own span plus min(z_j, t_ji) from each
// other reducer. +inf when fewer than two peers compute, or without pair caps.
double pair_cap_bound(const ScaledProblem& p, const std::vector<bool>& computes);

// --- The achievable split (split_model.cc) --------------------------------------------------

// The best split a butterfly round can execute: every computing peer sends w_j to reducer j and
// every reducer returns w_j to every computing peer, all links within their capacities. Maximises
// W = Σ_j w_j (rounds per second × P, scaled). Empty w when fewer than two peers compute.
struct SplitResult {
  bool ok = false;
  double total = 0;
  std::vector<double> w;
};
// Starts from `start` when given; writes its final basis to `finish` when given.
SplitResult best_split(const ScaledProblem& p, const std::vector<bool>& computes,
                       const LpBasis* start = nullptr, LpBasis* finish = nullptr);

// Without pair caps the best split has a closed form (README.md, "The compact model"). With
// m >= 3 computing peers, q of them reducers, and b_i = min(d_i, u_i):
//   W = min( min_{i computes} b_i,
//            (Σ_{computing reducers} b_i + (m−2)/m · Σ_{other reducers} b_i) / (m − 2 + q) ).
// +inf when fewer than two peers compute.
double consistent_rate(const ScaledProblem& p, const std::vector<bool>& computes);
// The same formula with each reducer's download d_i in place of b_i: an upper bound on the
// averaging LP's rate for any input, pair caps or not (README.md, "The compact model").
double compact_download_bound(const ScaledProblem& p, const std::vector<bool>& computes);

// --- Roles (roles_search.cc) -----------------------------------------------------------------

struct RolesResult {
  std::vector<bool> computes;  // best roles found with two or more computing peers; may be empty
  double value = 0;            // min(Σκc, averaging rate) of `computes`, scaled
  double rate = 0;             // the averaging LP's rate of `computes`, scaled
  SplitResult split;           // the best consistent split of `computes`
  PlanBases bases;             // their LPs' final bases, when asked for
  double bound = 0;            // proven: no roles with two or more computing peers beat this
  bool exact = false;          // bound == value (up to 1e-6 relative)
  // Averaging keeps up with every compute-capable peer computing (then `computes` is all of them
  // and optimal without a search).
  bool everyone = false;
  bool warm = false;           // the incumbent came from the hint
  std::int64_t nodes = 0;      // branch-and-bound nodes, all MIPs together
  int mips = 0;                // MIPs solved
  int enumerated = 0;          // cases settled by testing each of their few role sets instead
  int region_splits = 0;       // cases of two regions split by their count in the first
  int evaluations = 0;         // averaging LPs solved for candidate roles
  // Averaging LPs from the previous plan's basis that fit so badly that they started over cold;
  // after the first, the search no longer tries that basis.
  int warm_dropped = 0;
};

struct RolesSearchLimits {
  std::int64_t max_mip_nodes = 0;  // per MIP; 0 = automatic
  int max_mips = 0;                // MIP solves in all; 0 = automatic
  double gap = 0;                  // stop once no roles can beat the incumbent by more than this
  // Tests: split every case of two regions by region count before any MIP, and settle no case by
  // testing its role sets, so that small compositions exercise the programs with counts.
  bool split_regions_first = false;
};

class Model;  // glpk_model.h
// Symmetry breaking for a roles program whose compute column of peer i is c[i] (0: the peer cannot
// compute): among interchangeable peers, earlier ones compute first.
void add_symmetry_breaking(const ScaledProblem& p, const std::vector<int>& c, Model& model);

// Phase 1 for Roles::Optimize (needs p.compute_term): the best roles with two or more computing
// peers. The incumbent comes from `hint` (roles of a previous plan) when it has two or more
// computing peers, else from nested bandwidth thresholds (over all peers, then within each set of
// regions that can still beat it); then one MIP on the aggregated model
// per case (number of computing peers, and with pair caps which regions compute) that could
// still beat it (README.md, "The roles search"). The LPs of roles next to the start's start from
// `start` when given; with `record_bases` the result carries the final roles' LP bases.
RolesResult search_roles(const ScaledProblem& p, const RolesSearchLimits& limits,
                         const std::vector<bool>& hint, const PlanBases* start = nullptr,
                         bool record_bases = false);

// --- Reference programs (reference_model.cc): the literal O(n²) models ------------------------
// Slow but independent of the aggregated forms above; tests check the fast path against them,
// and averaging_lp falls back on the LP if its cut loop ever runs out of rounds.

struct FlowResult {
  bool ok = false;
  double rho = 0;                      // max averaging rate (scaled)
  std::vector<double> z;               // aggregation rate per peer
  std::vector<std::vector<double>> g;  // g[j][i], reducer j returns to i
};
// The averaging LP with the roles fixed, per pair (a_kj = z_j substituted).
FlowResult reference_averaging_lp(const ScaledProblem& p, const std::vector<bool>& computes);

struct ReferenceRoles {
  std::vector<bool> computes;  // empty when nothing beat the cutoff
  bool exact = false;
  double rho = 0;  // min(Σκc, averaging rate), scaled
  std::int64_t nodes = 0;
};
// The O(n²) mixed-integer program with c binary (big-M form), plans with ρ >= cutoff and at
// least two computing peers.
ReferenceRoles reference_roles_mip(const ScaledProblem& p, std::int64_t max_nodes, double cutoff);
// Its LP relaxation (c continuous in [0,1]); c_i per peer.
std::vector<double> reference_roles_relaxation(const ScaledProblem& p);

}  // namespace swarmlab::core::planner::detail
