// Warm starts of the planner's LPs from a previous solve's bases (README.md, "Warm starts").
#include <algorithm>

#include "core/planner/lp_model.h"

namespace swarmlab::core::planner::detail {
namespace {

bool item_before(const std::pair<LpItem, int>& x, const std::pair<LpItem, int>& y) {
  return x.first < y.first;
}

LpBasis renumbered(const LpBasis& basis, const std::vector<int>& to) {
  auto moved = [&](int i) { return i >= 0 && i < static_cast<int>(to.size()) ? to[i] : -1; };
  LpBasis out;
  out.exact_phase = basis.exact_phase;
  out.status.reserve(basis.status.size());
  for (const auto& [item, status] : basis.status) {
    LpItem now{item.kind, moved(item.a), moved(item.b)};
    if ((item.a >= 0 && now.a < 0) || (item.b >= 0 && now.b < 0)) continue;
    for (int i : item.set) {
      if (moved(i) >= 0) now.set.push_back(moved(i));
    }
    if (!item.set.empty() && now.set.empty()) continue;
    std::sort(now.set.begin(), now.set.end());
    out.status.emplace_back(std::move(now), status);
  }
  std::stable_sort(out.status.begin(), out.status.end(), item_before);
  // Two cuts may now have the same receivers: keep the first.
  out.status.erase(std::unique(out.status.begin(), out.status.end(),
                               [](const auto& x, const auto& y) { return x.first == y.first; }),
                   out.status.end());
  return out;
}

// Sets `lp`'s statuses from `start`, repaired to a basis; true when it is valid and nonsingular.
bool start_from_basis(glp_prob* lp, const LpItems& items, const LpBasis& start) {
  const int rows = glp_get_num_rows(lp), cols = glp_get_num_cols(lp);
  int basic = 0;
  for (int r = 1; r <= rows; ++r) {
    const LpItem& item = items.row(r);
    const int status = item.kind == LpItemKind::None ? GLP_BS : start.status_of(item, GLP_BS);
    glp_set_row_stat(lp, r, status);
    basic += status == GLP_BS ? 1 : 0;
  }
  for (int col = 1; col <= cols; ++col) {
    const LpItem& item = items.col(col);
    const int status = item.kind == LpItemKind::None ? GLP_NL : start.status_of(item, GLP_NL);
    glp_set_col_stat(lp, col, status);  // GLPK moves a nonbasic status to a bound that exists
    basic += status == GLP_BS ? 1 : 0;
  }
  // A basis has exactly one basic variable per row. Where the items do not match one for one (a
  // peer's rows and columns went unevenly, a rounding row is gone), the latest rows' slacks
  // enter or the latest basic columns leave; glp_warm_up then rejects a singular result.
  for (int r = rows; r >= 1 && basic < rows; --r) {
    if (glp_get_row_stat(lp, r) == GLP_BS) continue;
    glp_set_row_stat(lp, r, GLP_BS);
    ++basic;
  }
  for (int col = cols; col >= 1 && basic > rows; --col) {
    if (glp_get_col_stat(lp, col) != GLP_BS) continue;
    glp_set_col_stat(lp, col, GLP_NL);
    --basic;
  }
  return basic == rows && glp_warm_up(lp) == 0;
}

}  // namespace

int LpBasis::status_of(const LpItem& item, int fresh) const {
  // Compared with the item itself: a pair made to search with would copy its receiver set.
  const auto it = std::ranges::lower_bound(status, item, {}, &std::pair<LpItem, int>::first);
  return it != status.end() && it->first == item ? it->second : fresh;
}

void start_basis(glp_prob* lp, const LpItems& items, const LpBasis* start) {
  if (start && start_from_basis(lp, items, *start)) return;
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_adv_basis(lp, 0);
}

void record_basis(glp_prob* lp, const LpItems& items, LpBasis* out) {
  out->status.clear();
  for (int col = 1; col <= glp_get_num_cols(lp); ++col) {
    const LpItem& item = items.col(col);
    if (item.kind != LpItemKind::None) out->status.emplace_back(item, glp_get_col_stat(lp, col));
  }
  for (int r = 1; r <= glp_get_num_rows(lp); ++r) {
    const LpItem& item = items.row(r);
    if (item.kind != LpItemKind::None) out->status.emplace_back(item, glp_get_row_stat(lp, r));
  }
  std::sort(out->status.begin(), out->status.end(), item_before);
}

PlanBases reindexed(const PlanBases& bases, const std::vector<int>& to) {
  return {renumbered(bases.averaging, to), renumbered(bases.split, to)};
}

}  // namespace swarmlab::core::planner::detail
