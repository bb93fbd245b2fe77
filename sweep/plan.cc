#include "sweep/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/rng.h"

namespace swarmlab::sweep {

namespace {

double round_significant(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return std::strtod(buf, nullptr);
}

// Position u in [0, 1] of the range, as a number.
double range_at(const Axis& a, double u) {
  if (a.integer) {
    // Every integer in [lo, hi] gets an equal share of [0, 1) (of its log span on a log scale).
    const double lo = *a.lo, hi = *a.hi + 1;
    const double x = a.log_scale ? std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))) : lo + u * (hi - lo);
    return std::clamp(std::floor(x), *a.lo, *a.hi);
  }
  const double x = a.log_scale ? std::exp(std::log(*a.lo) + u * (std::log(*a.hi) - std::log(*a.lo)))
                               : *a.lo + u * (*a.hi - *a.lo);
  return std::clamp(round_significant(x), *a.lo, *a.hi);
}

json as_json(const Axis& a, double x) {
  if (a.integer) return static_cast<std::uint64_t>(x);
  return x;
}

// Row-major product of level lists (the first list varies slowest).
std::vector<std::vector<json>> product(const std::vector<std::vector<json>>& lists) {
  std::vector<std::vector<json>> out(1);
  for (const auto& list : lists) {
    std::vector<std::vector<json>> next;
    next.reserve(out.size() * list.size());
    for (const auto& prefix : out)
      for (const auto& v : list) {
        next.push_back(prefix);
        next.back().push_back(v);
      }
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::vector<json> grid_levels(const Axis& a, std::uint64_t levels) {
  if (!a.lo) return a.values;
  std::vector<json> out;
  const std::uint64_t n = a.steps.value_or(levels);
  for (std::uint64_t i = 0; i < n; ++i) {
    const double t = n == 1 ? 0 : static_cast<double>(i) / static_cast<double>(n - 1);
    double x;
    if (a.log_scale) x = std::exp(std::log(*a.lo) + t * (std::log(*a.hi) - std::log(*a.lo)));
    else x = *a.lo + t * (*a.hi - *a.lo);
    x = a.integer ? std::round(x) : round_significant(x);
    x = std::clamp(x, *a.lo, *a.hi);
    const json v = as_json(a, x);
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

json value_at(const Axis& a, double u) {
  if (!a.lo) {
    const auto n = a.values.size();
    return a.values[std::min<std::size_t>(n - 1, static_cast<std::size_t>(u * static_cast<double>(n)))];
  }
  return as_json(a, range_at(a, u));
}

SweepPlan make_plan(const SweepSpec& spec) {
  const Sampling& s = spec.sampling;
  const std::uint64_t default_levels = s.count.value_or(1);
  std::vector<std::size_t> sampled, crossed;
  for (std::size_t i = 0; i < spec.axes.size(); ++i) (spec.axes[i].crossed ? crossed : sampled).push_back(i);

  // Points over the sampled axes.
  std::vector<std::vector<json>> points;
  if (s.method == Method::Grid) {
    std::vector<std::vector<json>> lists;
    for (auto i : sampled) lists.push_back(grid_levels(spec.axes[i], default_levels));
    points = product(lists);
  } else {
    const std::uint64_t n = *s.count;
    points.assign(n, {});
    for (std::size_t k = 0; k < sampled.size(); ++k) {
      const Axis& a = spec.axes[sampled[k]];
      core::Rng rng(s.seed, sampled[k] + 1);  // one stream per axis: adding an axis leaves the others' draws alone
      std::vector<std::uint64_t> stratum(n);
      for (std::uint64_t i = 0; i < n; ++i) stratum[i] = i;
      if (s.method == Method::LatinHypercube)
        for (std::uint64_t i = n; i > 1; --i) std::swap(stratum[i - 1], stratum[rng.below(i)]);
      for (std::uint64_t p = 0; p < n; ++p) {
        const double u = s.method == Method::Random
                             ? rng.uniform()
                             : (static_cast<double>(stratum[p]) + rng.uniform()) / static_cast<double>(n);
        points[p].push_back(value_at(a, u));
      }
    }
  }
  std::vector<std::vector<json>> crossed_lists;
  for (auto i : crossed) crossed_lists.push_back(grid_levels(spec.axes[i], default_levels));
  const auto combos = product(crossed_lists);

  SweepPlan plan;
  plan.compositions = points.size() * combos.size();
  plan.runs.reserve(plan.compositions * spec.seeds.size());
  for (std::size_t p = 0; p < points.size(); ++p)
    for (std::size_t c = 0; c < combos.size(); ++c)
      for (const std::uint64_t seed : spec.seeds) {
        RunDesc r;
        r.index = plan.runs.size();
        r.composition = p * combos.size() + c;
        r.seed = seed;
        r.values.resize(spec.axes.size());
        for (std::size_t k = 0; k < sampled.size(); ++k) r.values[sampled[k]] = points[p][k];
        for (std::size_t k = 0; k < crossed.size(); ++k) r.values[crossed[k]] = combos[c][k];
        plan.runs.push_back(std::move(r));
      }
  return plan;
}

}  // namespace swarmlab::sweep
