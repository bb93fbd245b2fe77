#include "core/moshpit/group_size.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace swarmlab::core::moshpit {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Below this per-round decay rate of the slowest group's failure probability the exact sum would
// need more than ~10^5 terms; the smooth integral (plus the Euler–Maclaurin 1/2) is then accurate
// to about λ/10 absolute, against a total of at least 1/λ.
constexpr double kExactSumMinRate = 1e-3;
constexpr double kTailTolerance = 1e-13;

struct Failing {
  double rate;   // λ = −ln(1 − q): P(group still unsuccessful after t attempts) = e^{−λt}
  double count;  // groups of this kind
};

// P(some group still unsuccessful after t rounds) = 1 − Π_j (1 − e^{−λ_j t})^{c_j}, in logs.
double unfinished(const std::vector<Failing>& kinds, double t) {
  double log_all_done = 0.0;
  for (const auto& k : kinds) log_all_done += k.count * std::log(-std::expm1(-k.rate * t));
  return -std::expm1(log_all_done);
}

// Σ_{t≥0} P(T > t) = E[T], summed until the union bound on the tail is negligible.
double exact_sum(const std::vector<Failing>& kinds) {
  double sum = 1.0;  // t = 0: nothing has happened yet
  for (double t = 1.0;; t += 1.0) {
    sum += unfinished(kinds, t);
    if (std::fmod(t, 32.0) != 0.0) continue;  // the tail bound costs as much as a term
    double tail = 0.0;
    for (const auto& k : kinds) tail += k.count * std::exp(-k.rate * (t + 1)) / -std::expm1(-k.rate);
    if (tail < kTailTolerance * sum) return sum;
  }
}

// ∫_0^∞ P(T > t) dt + 1/2 (Euler–Maclaurin; the derivative terms are O(λ)). Simpson's rule over a
// range that covers the tail to ~e^{-40}; P(T > t) changes on the scale 1/λ, which gets hundreds
// of points.
double smooth_sum(const std::vector<Failing>& kinds) {
  double slowest = kInf, total = 0.0;
  for (const auto& k : kinds) {
    slowest = std::min(slowest, k.rate);
    total += k.count;
  }
  const double end = (std::log(total) + 40.0) / slowest;
  constexpr int kPanels = 1 << 14;
  const double h = end / kPanels;
  double acc = 1.0 + unfinished(kinds, end);
  for (int i = 1; i < kPanels; ++i) acc += (i % 2 ? 4.0 : 2.0) * unfinished(kinds, i * h);
  return acc * h / 3.0 + 0.5;
}

// The trivial lower bound max(1, max_g 1/q_g) of an axis, for pruning.
double axis_lower_bound(std::span<const GroupCount> groups, double p) {
  double bound = 1.0;
  for (const auto& g : groups)
    if (g.size > 1 && g.count > 0) bound = std::max(bound, 1.0 / std::pow(1.0 - p, static_cast<double>(g.size)));
  return bound;
}

void check(std::uint64_t peers, double p) {
  if (peers < 2) throw std::invalid_argument("need at least 2 peers, got " + std::to_string(peers));
  if (!(p >= 0.0 && p < 1.0))
    throw std::invalid_argument("failure rate must be in [0, 1), got " + std::to_string(p));
}

// Better = fewer expected rounds; on a tie, the larger group size.
bool better(const GroupSizeOption& a, const GroupSizeOption& b) {
  if (a.expected_rounds != b.expected_rounds) return a.expected_rounds < b.expected_rounds;
  return a.group_size > b.group_size;
}

}  // namespace

double grid_expected_rounds(const GridShape& shape, double p) {
  // Axes below the incomplete block look alike; reuse the last axis's value when its groups match.
  double total = 0.0, last = 0.0;
  std::vector<GroupCount> previous;
  for (std::uint64_t k = 0; k < shape.dims; ++k) {
    auto groups = group_sizes(shape, k);
    const bool same = groups.size() == previous.size() &&
                      std::equal(groups.begin(), groups.end(), previous.begin(), [](const auto& a, const auto& b) {
                        return a.size == b.size && a.count == b.count;
                      });
    if (!same) last = expected_axis_rounds(groups, p);
    total += last;
    previous = std::move(groups);
  }
  return total;
}

double expected_axis_rounds(std::span<const GroupCount> groups, double p) {
  if (!(p >= 0.0 && p < 1.0)) throw std::invalid_argument("failure rate must be in [0, 1)");
  std::vector<Failing> kinds;
  for (const auto& g : groups) {
    if (g.size <= 1 || g.count == 0) continue;
    const double q = std::pow(1.0 - p, static_cast<double>(g.size));  // all members survive
    if (q >= 1.0) continue;                                            // p = 0: never fails
    if (q <= 0.0) return kInf;                                         // underflow: never succeeds
    kinds.push_back({-std::log1p(-q), static_cast<double>(g.count)});
  }
  if (kinds.empty()) return 1.0;
  double slowest = kInf;
  for (const auto& k : kinds) slowest = std::min(slowest, k.rate);
  return slowest >= kExactSumMinRate ? exact_sum(kinds) : smooth_sum(kinds);
}

double expected_rounds(std::uint64_t peers, std::uint64_t group_size, double p) {
  check(peers, p);
  return grid_expected_rounds(grid_shape(peers, group_size), p);
}

GroupSizeChoice choose_group_size(std::uint64_t peers, double p) {
  check(peers, p);
  // One candidate per distinct grid: for each reachable d, the smallest side that covers n.
  struct Candidate {
    GridShape shape;
    double lower_bound;
  };
  std::vector<Candidate> candidates;
  for (std::uint64_t m = peers;;) {
    const GridShape shape = grid_shape(peers, m);
    double bound = 0.0;
    for (std::uint64_t k = 0; k < shape.dims; ++k) bound += axis_lower_bound(group_sizes(shape, k), p);
    candidates.push_back({shape, bound});
    if (shape.side == 2) break;
    m = grid_shape(peers, shape.side - 1).side;  // the next grid has one more axis
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.lower_bound < b.lower_bound; });

  std::optional<GroupSizeOption> best, second;
  for (const auto& c : candidates) {
    if (second && c.lower_bound > second->expected_rounds) break;  // can beat neither
    const GroupSizeOption option{c.shape.side, grid_expected_rounds(c.shape, p)};
    if (!best || better(option, *best)) {
      second = best;
      best = option;
    } else if (!second || better(option, *second)) {
      second = option;
    }
  }
  return {*best, second};
}

}  // namespace swarmlab::core::moshpit
