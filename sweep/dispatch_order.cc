#include "sweep/dispatch_order.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>

namespace swarmlab::sweep {

double list_makespan(std::span<const double> costs, std::span<const std::size_t> order, unsigned jobs) {
  // Times at which the workers come free; the earliest takes the next item.
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (unsigned j = 0; j < std::max(jobs, 1u); ++j) free_at.push(0);
  double end = 0;
  for (const std::size_t item : order) {
    const double start = free_at.top();
    free_at.pop();
    const double finish = start + costs[item];
    end = std::max(end, finish);
    free_at.push(finish);
  }
  return end;
}

std::vector<std::size_t> dispatch_order(std::span<const double> costs, unsigned jobs) {
  std::vector<std::size_t> best(costs.size());
  std::iota(best.begin(), best.end(), 0);
  std::stable_sort(best.begin(), best.end(), [&](std::size_t a, std::size_t b) { return costs[a] > costs[b]; });
  if (costs.size() > kExhaustiveDispatchItems || jobs <= 1 || costs.size() <= jobs) return best;
  double best_end = list_makespan(costs, best, jobs);
  std::vector<std::size_t> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  do {
    // Strictly sooner only: estimates' rounding must not reorder equal plans.
    const double end = list_makespan(costs, order, jobs);
    if (end < best_end * (1 - 1e-12)) best_end = end, best = order;
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

}  // namespace swarmlab::sweep
