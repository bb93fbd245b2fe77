#include "sim/experiments/moshpit_experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/rng.h"

namespace swarmlab::sim {
namespace {

using core::moshpit::Partition;

constexpr std::uint64_t kMaxValues = std::uint64_t{1} << 28;  // per method: 2 GiB of doubles
constexpr std::uint64_t kMaxRounds = 10'000'000;

// Independent random streams, so that e.g. changing how groups are drawn leaves the failures alone.
enum Stream : std::uint64_t { kInit = 1, kFailures = 2, kRandomGroups = 3 };

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void validate(const MoshpitConfig& c) {
  auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
  if (c.peers < 2) bad("--peers must be at least 2, got " + std::to_string(c.peers));
  if (c.peers > 0xFFFFFFFFull) bad("--peers must be below 2^32");
  if (c.group_size < 2) bad("--group-size must be at least 2, got " + std::to_string(c.group_size));
  if (!(c.failure_rate >= 0.0 && c.failure_rate < 1.0))
    bad("--failure-rate must be in [0, 1), got " + number(c.failure_rate));
  if (c.rounds < 1 || c.rounds > kMaxRounds) bad("--rounds must be in [1, 10^7], got " + std::to_string(c.rounds));
  if (c.dim < 1) bad("--dim must be at least 1");
  if (c.dim > kMaxValues || c.peers * c.dim > kMaxValues)
    bad("--peers × --dim must be at most 2^28 values, got " + std::to_string(c.peers) + " × " + std::to_string(c.dim));
  if (!(c.target > 0.0)) bad("--target must be positive, got " + number(c.target));
}

// Σ_i ‖x_i − mean‖².
double spread(const std::vector<double>& values, const std::vector<double>& mean) {
  const std::size_t dim = mean.size();
  double total = 0.0;
  for (std::size_t base = 0; base < values.size(); base += dim) {
    double row = 0.0;
    for (std::size_t j = 0; j < dim; ++j) {
      const double d = values[base + j] - mean[j];
      row += d * d;
    }
    total += row;
  }
  return total;
}

// A uniformly random partition into groups of `size` (the last one holds the remainder).
void random_partition(core::Rng& rng, std::size_t size, std::vector<std::uint32_t>& perm, Partition& out) {
  for (std::size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(i + 1)]);
  out.clear();
  for (std::size_t start = 0; start < perm.size(); start += size) {
    const std::size_t end = std::min(perm.size(), start + size);
    out.members.insert(out.members.end(), perm.begin() + static_cast<std::ptrdiff_t>(start),
                       perm.begin() + static_cast<std::ptrdiff_t>(end));
    out.close_group();
  }
}

std::string format_error(double e) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3e", e);
  return buf;
}

std::string format_rounds(const std::optional<std::uint64_t>& r) { return r ? std::to_string(*r) : "never"; }

}  // namespace

template <typename T>
void average_groups(std::span<T> values, std::size_t dim, const Partition& groups,
                    std::span<const std::uint8_t> alive, std::span<T> scratch) {
  T* acc = scratch.data();
  for (std::size_t g = 0; g < groups.groups(); ++g) {
    const auto members = groups.group(g);
    std::size_t live = 0;
    for (std::uint32_t peer : members) {
      if (!alive[peer]) continue;
      const T* row = values.data() + std::size_t{peer} * dim;
      if (live++ == 0) std::copy(row, row + dim, acc);
      else
        for (std::size_t j = 0; j < dim; ++j) acc[j] += row[j];
    }
    if (live < 2) continue;  // a lone live member already holds its group's mean
    const T inv = T(1) / static_cast<T>(live);
    for (std::size_t j = 0; j < dim; ++j) acc[j] *= inv;
    for (std::uint32_t peer : members)
      if (alive[peer]) std::copy(acc, acc + dim, values.data() + std::size_t{peer} * dim);
  }
}

template void average_groups<float>(std::span<float>, std::size_t, const Partition&, std::span<const std::uint8_t>,
                                    std::span<float>);
template void average_groups<double>(std::span<double>, std::size_t, const Partition&, std::span<const std::uint8_t>,
                                     std::span<double>);

MoshpitResult run_moshpit_experiment(const MoshpitConfig& config) {
  validate(config);
  const std::size_t n = config.peers, dim = config.dim;
  const core::moshpit::Grid grid(config.peers, config.group_size);

  MoshpitResult result;
  result.config = config;
  result.grid = grid.shape();

  std::vector<double> moshpit(n * dim);
  core::Rng init(config.seed, kInit);
  for (double& v : moshpit) v = init.normal();
  std::vector<double> mean(dim, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < dim; ++j) mean[j] += moshpit[i * dim + j];
  for (double& m : mean) m /= static_cast<double>(n);
  std::vector<double> random_groups = moshpit;
  const double initial_spread = spread(moshpit, mean);

  core::Rng failures(config.seed, kFailures);
  core::Rng grouping(config.seed, kRandomGroups);
  std::vector<std::uint8_t> alive(n);
  std::vector<double> scratch(dim);
  std::vector<std::uint32_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0u);
  Partition random_part;
  const std::size_t random_size = static_cast<std::size_t>(std::min<std::uint64_t>(config.group_size, n));
  bool allreduce_done = false;

  auto reached = [&](std::optional<std::uint64_t>& slot, double error, std::uint64_t round) {
    if (!slot && error < config.target) slot = round;
  };
  result.per_round.reserve(static_cast<std::size_t>(config.rounds));
  for (std::uint64_t t = 0; t < config.rounds; ++t) {
    bool everyone = true;
    for (auto& a : alive) {
      a = failures.bernoulli(config.failure_rate) ? 0 : 1;
      everyone = everyone && a;
    }
    average_groups<double>(moshpit, dim, grid.groups_in_round(t), alive, scratch);
    random_partition(grouping, random_size, perm, random_part);
    average_groups<double>(random_groups, dim, random_part, alive, scratch);
    // Once an all-reduce round completes everyone holds x̄ exactly and nothing changes after.
    allreduce_done = allreduce_done || everyone;

    MoshpitRoundError e;
    e.round = t + 1;
    e.moshpit = std::sqrt(spread(moshpit, mean) / initial_spread);
    e.allreduce_restart = allreduce_done ? 0.0 : 1.0;
    e.random_groups = std::sqrt(spread(random_groups, mean) / initial_spread);
    reached(result.moshpit_to_target, e.moshpit, e.round);
    reached(result.allreduce_restart_to_target, e.allreduce_restart, e.round);
    reached(result.random_groups_to_target, e.random_groups, e.round);
    result.per_round.push_back(e);
  }
  return result;
}

std::string moshpit_json(const MoshpitResult& r) {
  using Json = nlohmann::ordered_json;
  auto rounds = [](const std::optional<std::uint64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  Json out;
  out["rounds_to_target"] = Json{{"moshpit", rounds(r.moshpit_to_target)},
                                 {"allreduce_restart", rounds(r.allreduce_restart_to_target)},
                                 {"random_groups", rounds(r.random_groups_to_target)}};
  Json per_round = Json::array();
  for (const auto& e : r.per_round)
    per_round.push_back(Json{{"round", e.round},
                             {"moshpit_mse", e.moshpit},
                             {"allreduce_restart_mse", e.allreduce_restart},
                             {"random_groups_mse", e.random_groups}});
  out["per_round"] = std::move(per_round);
  return out.dump(2) + "\n";
}

std::string moshpit_text(const MoshpitResult& r) {
  const auto& c = r.config;
  const auto& g = r.grid;
  char line[256];
  std::string out;
  std::snprintf(line, sizeof line, "Moshpit averaging: %llu peers, group size %llu, failure rate %g, dim %zu, seed %llu\n",
                static_cast<unsigned long long>(c.peers), static_cast<unsigned long long>(c.group_size),
                c.failure_rate, c.dim, static_cast<unsigned long long>(c.seed));
  out += line;
  std::snprintf(line, sizeof line, "grid: %llu axes of side %llu%s\n", static_cast<unsigned long long>(g.dims),
                static_cast<unsigned long long>(g.side), g.complete() ? "" : " (incomplete: has partial groups)");
  out += line;
  out += "relative error sqrt(sum |x_i - mean|^2 / sum |x_i(0) - mean|^2) after each round\n";
  std::snprintf(line, sizeof line, "%7s  %12s  %17s  %13s\n", "round", "moshpit", "allreduce_restart", "random_groups");
  out += line;
  for (const auto& e : r.per_round) {
    std::snprintf(line, sizeof line, "%7llu  %12s  %17s  %13s\n", static_cast<unsigned long long>(e.round),
                  format_error(e.moshpit).c_str(), format_error(e.allreduce_restart).c_str(),
                  format_error(e.random_groups).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "rounds to reach %g (within %llu): moshpit %s, allreduce_restart %s, random_groups %s\n",
                c.target, static_cast<unsigned long long>(c.rounds), format_rounds(r.moshpit_to_target).c_str(),
                format_rounds(r.allreduce_restart_to_target).c_str(), format_rounds(r.random_groups_to_target).c_str());
  out += line;
  return out;
}

}  // namespace swarmlab::sim
