#include "core/planner/max_flow.h"

#include <algorithm>
#include <limits>

namespace swarmlab::core::planner::detail {

MaxFlow::MaxFlow(int nodes) : n_(nodes), out_(nodes), level_(nodes), next_(nodes) {}

void MaxFlow::add_edge(int from, int to, double capacity) {
  if (!(capacity > 0)) return;
  out_[from].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({to, capacity});
  out_[to].push_back(static_cast<int>(edges_.size()));
  edges_.push_back({from, 0.0});
}

bool MaxFlow::levels(int s, int t, double eps) {
  std::fill(level_.begin(), level_.end(), -1);
  std::vector<int> queue{s};
  level_[s] = 0;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int v = queue[head];
    for (int e : out_[v]) {
      const Edge& edge = edges_[e];
      if (edge.residual > eps && level_[edge.to] < 0) {
        level_[edge.to] = level_[v] + 1;
        queue.push_back(edge.to);
      }
    }
  }
  return level_[t] >= 0;
}

double MaxFlow::push(int v, int t, double limit, double eps) {
  if (v == t) return limit;
  for (; next_[v] < out_[v].size(); ++next_[v]) {
    const int e = out_[v][next_[v]];
    Edge& edge = edges_[e];
    if (edge.residual <= eps || level_[edge.to] != level_[v] + 1) continue;
    const double got = push(edge.to, t, std::min(limit, edge.residual), eps);
    if (got > 0) {
      edge.residual -= got;
      edges_[e ^ 1].residual += got;
      return got;
    }
  }
  return 0;
}

double MaxFlow::run(int s, int t, double eps) {
  double total = 0;
  while (levels(s, t, eps)) {
    std::fill(next_.begin(), next_.end(), 0);
    for (;;) {
      const double got = push(s, t, std::numeric_limits<double>::infinity(), eps);
      if (!(got > eps)) break;
      total += got;
    }
  }
  return total;
}

std::vector<bool> MaxFlow::source_side(int s, double eps) const {
  std::vector<bool> seen(n_, false);
  std::vector<int> stack{s};
  seen[s] = true;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (int e : out_[v]) {
      const Edge& edge = edges_[e];
      if (edge.residual > eps && !seen[edge.to]) {
        seen[edge.to] = true;
        stack.push_back(edge.to);
      }
    }
  }
  return seen;
}

}  // namespace swarmlab::core::planner::detail
