#include "core/planner/glpk_model.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace swarmlab::core::planner::detail {

Model::Model() : lp_(glp_create_prob()) { glp_set_obj_dir(lp_, GLP_MAX); }
Model::~Model() { glp_delete_prob(lp_); }

int Model::col(double lb, double ub, double obj, bool binary) {
  cols_.push_back({lb, ub, obj, binary});
  return static_cast<int>(cols_.size());
}

int Model::row(double lo, double hi) {
  rows_.emplace_back(lo, hi);
  return static_cast<int>(rows_.size());
}

void Model::coef(int row, int col, double value) {
  if (value == 0) return;
  ia_.push_back(row);
  ja_.push_back(col);
  ar_.push_back(value);
}

void Model::set_col_bounds(glp_prob* lp, int j, double lb, double ub) {
  if (ub == kInf) {
    glp_set_col_bnds(lp, j, GLP_LO, lb, 0.0);
  } else if (ub <= lb) {
    glp_set_col_bnds(lp, j, GLP_FX, lb, lb);
  } else {
    glp_set_col_bnds(lp, j, GLP_DB, lb, ub);
  }
}

int Model::add_row_le(glp_prob* lp, const std::vector<std::pair<int, double>>& terms, double hi) {
  const int r = glp_add_rows(lp, 1);
  std::vector<int> ind{0};
  std::vector<double> val{0.0};
  for (const auto& [col, v] : terms) {
    if (v == 0) continue;
    ind.push_back(col);
    val.push_back(v);
  }
  glp_set_mat_row(lp, r, static_cast<int>(ind.size()) - 1, ind.data(), val.data());
  glp_set_row_bnds(lp, r, GLP_UP, 0.0, hi);
  return r;
}

glp_prob* Model::load() {
  if (!cols_.empty()) glp_add_cols(lp_, static_cast<int>(cols_.size()));
  for (std::size_t k = 0; k < cols_.size(); ++k) {
    const auto& c = cols_[k];
    const int j = static_cast<int>(k) + 1;
    if (c.binary) glp_set_col_kind(lp_, j, GLP_BV);  // before the bounds: GLP_BV resets them
    set_col_bounds(lp_, j, c.lb, c.ub);
    glp_set_obj_coef(lp_, j, c.obj);
  }
  if (!rows_.empty()) glp_add_rows(lp_, static_cast<int>(rows_.size()));
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    const auto [lo, hi] = rows_[k];
    const int i = static_cast<int>(k) + 1;
    if (lo == hi) {
      glp_set_row_bnds(lp_, i, GLP_FX, lo, hi);
    } else if (lo == -kInf) {
      glp_set_row_bnds(lp_, i, GLP_UP, 0.0, hi);
    } else {
      glp_set_row_bnds(lp_, i, GLP_LO, lo, 0.0);
    }
  }
  glp_load_matrix(lp_, static_cast<int>(ar_.size()) - 1, ia_.data(), ja_.data(), ar_.data());
  return lp_;
}

glp_smcp simplex_params(const glp_prob* lp, bool dual) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.meth = dual ? GLP_DUALP : GLP_PRIMAL;
  parm.pricing = GLP_PT_PSE;
  parm.r_test = GLP_RT_HAR;
  parm.presolve = GLP_OFF;
  const long size = static_cast<long>(glp_get_num_rows(const_cast<glp_prob*>(lp))) +
                    glp_get_num_cols(const_cast<glp_prob*>(lp));
  parm.it_lim = static_cast<int>(std::min<long>(INT_MAX, 100000 + 50 * size));
  parm.tm_lim = INT_MAX;  // never a wall-clock limit: results must not depend on machine speed
  return parm;
}

bool solve_simplex(glp_prob* lp, bool dual, int max_pivots) {
  glp_smcp parm = simplex_params(lp, dual);
  if (max_pivots > 0) parm.it_lim = max_pivots;
  if (glp_simplex(lp, &parm) == 0 && glp_get_status(lp) == GLP_OPT) return true;
  if (!dual) return false;
  // The dual simplex needs a dual feasible basis; fall back on the primal one.
  glp_smcp primal = simplex_params(lp, false);
  if (max_pivots > 0) primal.it_lim = max_pivots;
  return glp_simplex(lp, &primal) == 0 && glp_get_status(lp) == GLP_OPT;
}

bool basis_is_optimal(glp_prob* lp) {
  if (glp_warm_up(lp) != 0) return false;
  const bool maximise = glp_get_obj_dir(lp) == GLP_MAX;
  // A basic variable within its bounds.
  auto within = [](int type, double lb, double ub, double prim) {
    const bool low = type == GLP_LO || type == GLP_DB || type == GLP_FX;
    const bool high = type == GLP_UP || type == GLP_DB || type == GLP_FX;
    return (!low || prim >= lb - 1e-9 * (1 + std::abs(lb))) &&
           (!high || prim <= ub + 1e-9 * (1 + std::abs(ub)));
  };
  // A nonbasic one whose reduced cost does not improve the objective in a direction it may move.
  auto priced_out = [&](int stat, double dual, double cost) {
    const double gain = maximise ? dual : -dual;  // objective change per unit increase
    const double eps = 1e-9 * (1 + std::abs(cost));
    if (stat == GLP_NL) return gain <= eps;
    if (stat == GLP_NU) return gain >= -eps;
    if (stat == GLP_NF) return std::abs(gain) <= eps;
    return true;  // GLP_NS: fixed
  };
  for (int r = 1, rows = glp_get_num_rows(lp); r <= rows; ++r) {
    const int stat = glp_get_row_stat(lp, r);
    if (stat == GLP_BS ? !within(glp_get_row_type(lp, r), glp_get_row_lb(lp, r), glp_get_row_ub(lp, r),
                                 glp_get_row_prim(lp, r))
                       : !priced_out(stat, glp_get_row_dual(lp, r), 0)) {
      return false;
    }
  }
  for (int c = 1, cols = glp_get_num_cols(lp); c <= cols; ++c) {
    const int stat = glp_get_col_stat(lp, c);
    if (stat == GLP_BS ? !within(glp_get_col_type(lp, c), glp_get_col_lb(lp, c), glp_get_col_ub(lp, c),
                                 glp_get_col_prim(lp, c))
                       : !priced_out(stat, glp_get_col_dual(lp, c), glp_get_obj_coef(lp, c))) {
      return false;
    }
  }
  return true;
}

namespace {

struct NodeBudget {
  std::int64_t max_nodes = 0;
  std::int64_t nodes = 0;
  bool stopped = false;
  double bound = kInf;  // best local bound among active nodes, at the last selection
};

void on_mip_event(glp_tree* tree, void* info) {
  auto* budget = static_cast<NodeBudget*>(info);
  if (glp_ios_reason(tree) != GLP_ISELECT) return;
  int active = 0, total = 0;
  glp_ios_tree_size(tree, &active, nullptr, &total);
  budget->nodes = total;
  if (active > 0) {
    const int best = glp_ios_best_node(tree);
    if (best > 0) budget->bound = glp_ios_node_bound(tree, best);
  }
  if (total > budget->max_nodes) {
    budget->stopped = true;
    glp_ios_terminate(tree);
  }
}

}  // namespace

MipOutcome run_mip(glp_prob* lp, std::int64_t max_nodes, bool warm,
                   const std::function<void()>& after_relaxation) {
  // The LP relaxation first, with our simplex: GLPK's MIP presolver is slower on these small
  // programs, and the values it restores for the columns it removed need not satisfy the rows.
  MipOutcome out;
  int lp_ret = 0;
  if (warm) {
    glp_smcp parm = simplex_params(lp, /*dual=*/true);
    lp_ret = glp_simplex(lp, &parm);
    if (lp_ret != 0 || (glp_get_status(lp) != GLP_OPT && glp_get_status(lp) != GLP_NOFEAS)) {
      glp_adv_basis(lp, 0);
      parm = simplex_params(lp);
      lp_ret = glp_simplex(lp, &parm);
    }
  } else {
    glp_adv_basis(lp, 0);
    const glp_smcp parm = simplex_params(lp);
    lp_ret = glp_simplex(lp, &parm);
  }
  if (lp_ret == 0 && (glp_get_status(lp) == GLP_NOFEAS || glp_get_prim_stat(lp) == GLP_NOFEAS)) {
    out.infeasible = out.optimal = true;
    out.bound = -kInf;
    return out;
  }
  if (lp_ret != 0 || glp_get_status(lp) != GLP_OPT) return out;
  if (after_relaxation) after_relaxation();

  NodeBudget budget;
  budget.max_nodes = max_nodes;
  budget.bound = glp_get_obj_val(lp);
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;
  parm.br_tech = GLP_BR_DTH;
  parm.bt_tech = GLP_BT_BLB;
  parm.pp_tech = GLP_PP_ALL;
  parm.sr_heur = GLP_ON;
  parm.fp_heur = GLP_OFF;
  parm.ps_heur = GLP_OFF;  // proximity search stops on a wall-clock limit: not deterministic
  parm.gmi_cuts = GLP_OFF;
  parm.mir_cuts = GLP_OFF;
  parm.cov_cuts = GLP_OFF;
  parm.clq_cuts = GLP_OFF;
  parm.binarize = GLP_OFF;
  parm.tol_int = 1e-7;
  parm.tol_obj = 1e-9;
  parm.mip_gap = 0;
  parm.tm_lim = INT_MAX;
  parm.cb_func = on_mip_event;
  parm.cb_info = &budget;
  const int ret = glp_intopt(lp, &parm);

  out.nodes = budget.nodes;
  const int status = glp_mip_status(lp);
  if (ret == GLP_ENOPFS || (ret == 0 && status == GLP_NOFEAS)) {
    out.infeasible = out.optimal = true;
    out.bound = -kInf;
    return out;
  }
  out.bound = budget.bound;
  if ((ret != 0 && ret != GLP_ESTOP) || (status != GLP_OPT && status != GLP_FEAS)) return out;
  out.solved = true;
  out.optimal = ret == 0 && status == GLP_OPT && !budget.stopped;
  if (out.optimal) out.bound = glp_mip_obj_val(lp);
  return out;
}

}  // namespace swarmlab::core::planner::detail
