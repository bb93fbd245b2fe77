#pragma once
// Internal to the planner: a thin, deterministic wrapper over GLPK. Rows and columns are collected
// in the order the caller creates them and handed to GLPK in one go; every solver option is set
// explicitly, none depends on wall-clock time.
#include <glpk.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

namespace swarmlab::core::planner::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// GLPK prints through a process-wide switch; silence it for one solve and restore the caller's.
class TermOff {
 public:
  TermOff() : previous_(glp_term_out(GLP_OFF)) {}
  ~TermOff() { glp_term_out(previous_); }
  TermOff(const TermOff&) = delete;
  TermOff& operator=(const TermOff&) = delete;

 private:
  int previous_;
};

// A maximisation problem under construction. Columns and rows are 1-based GLPK indices.
class Model {
 public:
  Model();
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  int col(double lb, double ub, double obj = 0, bool binary = false);  // ub may be +inf
  int row_le(double hi) { return row(-kInf, hi); }
  int row_ge(double lo) { return row(lo, kInf); }
  int row_eq(double v) { return row(v, v); }
  void coef(int row, int col, double value);
  void set_row_hi(int row, double hi) { rows_[row - 1].second = hi; }

  // Hands everything to GLPK and returns the problem (owned by this Model).
  glp_prob* load();

  static void set_col_bounds(glp_prob* lp, int j, double lb, double ub);
  // Adds sum(terms) <= hi to a loaded problem (cut loops); returns the row index. The new row is
  // basic, so the previous basis stays valid (dual feasible) for a warm re-solve.
  static int add_row_le(glp_prob* lp, const std::vector<std::pair<int, double>>& terms, double hi);

 private:
  int row(double lo, double hi);

  struct Col {
    double lb, ub, obj;
    bool binary;
  };
  glp_prob* lp_;
  std::vector<Col> cols_;
  std::vector<std::pair<double, double>> rows_;
  // GLPK's triplet arrays are 1-based: element 0 is a placeholder.
  std::vector<int> ia_{0}, ja_{0};
  std::vector<double> ar_{0.0};
};

// Primal simplex (dual simplex with `dual`), no presolve (keeps the basis for warm starts), an
// iteration limit instead of a time limit so that a numerically stuck solve ends the same way on
// every machine.
glp_smcp simplex_params(const glp_prob* lp, bool dual = false);
// Runs simplex with those parameters; true when an optimal basic solution was found. With
// `max_pivots` > 0, at most that many pivots (false when they run out).
bool solve_simplex(glp_prob* lp, bool dual = false, int max_pivots = 0);
// Whether the problem's current basis is optimal as it stands: its primal and dual values
// (glp_warm_up) feasible within 1e-9 (relative to each bound or cost, above 1), tighter than the
// simplex's own 1e-7. A warm start from a basis that still fits then needs no simplex, which
// copies the problem into its own working form even when it makes no pivot (README.md, "Warm
// starts"). The values it leaves are those of that basis.
bool basis_is_optimal(glp_prob* lp);

struct MipOutcome {
  bool solved = false;      // an integral solution was found
  bool optimal = false;     // ... and proven optimal (or proven that none exists)
  bool infeasible = false;  // proven: no integral solution (e.g. nothing beats the cutoff)
  std::int64_t nodes = 0;
  // Proven upper bound on the objective (maximisation): the best bound among the nodes left
  // when the search stopped; the optimum when it finished; -inf when proven infeasible.
  double bound = kInf;
};

// The LP relaxation by simplex (primal from an advanced basis, or with `warm` dual from the
// problem's current basis), then branch-and-cut (no presolve) with best-local-bound backtracking
// and a node budget. `after_relaxation`, if set, runs once the relaxation is optimal.
MipOutcome run_mip(glp_prob* lp, std::int64_t max_nodes, bool warm = false,
                   const std::function<void()>& after_relaxation = {});

}  // namespace swarmlab::core::planner::detail
