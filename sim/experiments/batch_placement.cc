#include "sim/experiments/batch_placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/averaging/round_plan.h"
#include "core/planner/planner.h"
#include "sim/experiments/averaging_experiment.h"

namespace swarmlab::sim {

namespace {

std::vector<std::size_t> devices_of(const scenarios::Scenario& sc) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < sc.peers.size(); ++i)
    if (sc.peers[i].compute_sps > 0) out.push_back(i);
  return out;
}

}  // namespace

std::vector<double> placement_features(const scenarios::Scenario& sc, const TransportAssumptions& transport) {
  const std::vector<std::size_t> dev = devices_of(sc);
  // Links as the transport delivers them, pair caps included (the planner's view).
  const core::planner::PlannerInput links = planner_input(sc, transport);
  const auto rate = [&](std::size_t i, std::size_t j) {
    const double r = std::min(links.peers[i].upload_bps, links.peers[j].download_bps);
    return links.pair_caps.empty() ? r : std::min(r, links.pair_caps[i][j]);
  };
  const double batch = static_cast<double>(sc.workload.target_batch);
  double slowest = 0, fastest_link = 0, farthest = 0;
  for (std::size_t i : dev) {
    slowest = std::max(slowest, 1 / sc.peers[i].compute_sps);
    fastest_link = std::max({fastest_link, links.peers[i].upload_bps, links.peers[i].download_bps});
    farthest = std::max(farthest, sc.peers[i].latency_s);
  }
  const auto scaled = [](double v, double by) { return by > 0 ? v / by : 0.0; };
  std::vector<double> f;
  for (std::size_t i : dev) {
    const auto& p = sc.peers[i];
    f.push_back(scaled(1 / p.compute_sps, slowest));
    f.push_back(p.max_micro_batch ? std::min(1.0, static_cast<double>(*p.max_micro_batch) / batch) : 1.0);
    f.push_back(scaled(links.peers[i].upload_bps, fastest_link));
    f.push_back(scaled(links.peers[i].download_bps, fastest_link));
  }
  for (std::size_t i : dev)
    for (std::size_t j : dev) f.push_back(i == j ? 0.0 : scaled(sc.peers[i].latency_s + sc.peers[j].latency_s, 2 * farthest));
  for (std::size_t i : dev)
    for (std::size_t j : dev) f.push_back(i == j ? 0.0 : scaled(rate(i, j), fastest_link));
  return f;
}

StepTimeModel::StepTimeModel(scenarios::Scenario composition, PlacementConfig config)
    : composition_(std::move(composition)), config_(std::move(config)), device_peers_(devices_of(composition_)) {
  if (device_peers_.empty())
    throw std::invalid_argument(composition_.name + ": no device computes (every compute_sps is 0)");
  if (composition_.workload.target_batch == 0)
    throw std::invalid_argument(composition_.name + ": no batch to place (workload.target_batch is 0)");
  if (!(config_.pass_overhead_s >= 0) || !std::isfinite(config_.pass_overhead_s))
    throw std::invalid_argument("pass overhead: expected a finite number of seconds >= 0");
}

double StepTimeModel::compute_seconds(std::span<const std::uint64_t> sizes) const {
  if (sizes.size() != devices())
    throw std::invalid_argument("expected " + std::to_string(devices()) + " sizes, got " + std::to_string(sizes.size()));
  if (std::accumulate(sizes.begin(), sizes.end(), std::uint64_t{0}) != batch())
    throw std::invalid_argument("the sizes must add up to the batch of " + std::to_string(batch()));
  double slowest = 0;
  for (std::size_t d = 0; d < devices(); ++d) {
    if (sizes[d] == 0) continue;
    const auto& p = composition_.peers[device_peers_[d]];
    const std::uint64_t per_pass = p.max_micro_batch.value_or(sizes[d]);
    const std::uint64_t passes = (sizes[d] + per_pass - 1) / per_pass;
    slowest = std::max(slowest, static_cast<double>(sizes[d]) / p.compute_sps +
                                    static_cast<double>(passes - 1) * config_.pass_overhead_s);
  }
  return slowest;
}

double StepTimeModel::averaging_seconds(std::span<const std::uint64_t> sizes) {
  std::vector<bool> members(devices());
  for (std::size_t d = 0; d < devices(); ++d) members[d] = sizes[d] > 0;
  if (std::count(members.begin(), members.end(), true) < 2) return 0;  // nothing to exchange
  if (const auto it = averaging_.find(members); it != averaging_.end()) return it->second;
  // The devices left out keep their links but compute nothing, so the all-reduce leaves them out.
  scenarios::Scenario sc = composition_;
  for (std::size_t d = 0; d < devices(); ++d)
    if (!members[d]) sc.peers[device_peers_[d]].compute_sps = 0;
  const double seconds = simulate_round(sc, core::averaging::Strategy::AllReduce);
  averaging_.emplace(std::move(members), seconds);
  return seconds;
}

StepTimeModel::PlannerStep StepTimeModel::planner_step() {
  const core::planner::Plan plan = core::planner::solve(planner_input(composition_, config_.transport), {});
  std::vector<double> weights(devices());
  for (std::size_t d = 0; d < devices(); ++d)
    weights[d] = plan.peers[device_peers_[d]].computes ? device_sps(d) : 0;
  PlannerStep step;
  step.sizes = split_batch(batch(), weights);
  step.compute_s = compute_seconds(step.sizes);
  scenarios::Scenario sc = composition_;
  for (std::size_t d = 0; d < devices(); ++d)
    if (step.sizes[d] == 0) sc.peers[device_peers_[d]].compute_sps = 0;
  const auto computing = std::count_if(step.sizes.begin(), step.sizes.end(), [](std::uint64_t n) { return n > 0; });
  step.averaging_s = computing < 2 ? 0 : simulate_round(sc, core::averaging::Strategy::Planned);
  return step;
}

double StepTimeModel::simulate_round(const scenarios::Scenario& sc, core::averaging::Strategy strategy) {
  AveragingRunConfig cfg;
  cfg.strategy = strategy;
  cfg.rounds = 1;
  cfg.backend = config_.backend;
  cfg.transport = config_.transport;
  ++rounds_simulated_;
  return run_averaging(sc, cfg).mean_round_s;
}

std::vector<std::uint64_t> split_batch(std::uint64_t batch, std::span<const double> weights) {
  if (weights.empty()) return {};
  if (!(std::accumulate(weights.begin(), weights.end(), 0.0) > 0)) return equal_split(batch, weights.size());
  const std::vector<std::uint64_t> begin = core::averaging::apportion(batch, weights);  // the spans' rule
  std::vector<std::uint64_t> sizes(weights.size());
  for (std::size_t d = 0; d < sizes.size(); ++d) sizes[d] = begin[d + 1] - begin[d];
  return sizes;
}

std::vector<std::uint64_t> equal_split(std::uint64_t batch, std::size_t devices) {
  return split_batch(batch, std::vector<double>(devices, 1.0));
}

std::vector<std::uint64_t> proportional_split(const StepTimeModel& model) {
  std::vector<double> sps(model.devices());
  for (std::size_t d = 0; d < model.devices(); ++d) sps[d] = model.device_sps(d);
  return split_batch(model.batch(), sps);
}

}  // namespace swarmlab::sim
