#pragma once
// Internal to the planner: maximum flow (Dinic's algorithm) on small dense graphs with
// floating-point capacities, used to check that the aggregated averaging model can be split into
// per-pair returns (README.md, "The averaging LP"). Deterministic: edges are visited in the
// order they were added.
#include <vector>

namespace swarmlab::core::planner::detail {

class MaxFlow {
 public:
  explicit MaxFlow(int nodes);

  // Capacities <= 0 add nothing.
  void add_edge(int from, int to, double capacity);
  // Maximum flow from s to t; residual capacities at or below eps count as saturated.
  double run(int s, int t, double eps);
  // After run(): whether each node is reachable from s in the residual graph (the source side
  // of a minimum cut).
  std::vector<bool> source_side(int s, double eps) const;

 private:
  struct Edge {
    int to;
    double residual;
  };
  bool levels(int s, int t, double eps);
  double push(int v, int t, double limit, double eps);

  int n_;
  std::vector<Edge> edges_;  // edge e and its reverse e ^ 1
  std::vector<std::vector<int>> out_;
  std::vector<int> level_;
  std::vector<std::size_t> next_;
};

}  // namespace swarmlab::core::planner::detail
