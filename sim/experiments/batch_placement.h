#pragma once
// How long one synchronous step of a composition takes when each device computes a chosen share of
// the global batch: the measure Hydra's distribution policy is trained against (docs/hydra.md §6).
// The devices (the scenario's peers with compute_sps > 0) compute their shares side by side, each
// in passes of at most its max_micro_batch samples; then the devices that computed anything
// average the gradient with a butterfly all-reduce (equal shares) on the simulated network. A
// device given nothing sits the step out, so leaving a badly connected device out shortens the
// all-reduce at the cost of the compute it would have added.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "scenarios/scenario.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {

struct PlacementConfig {
  std::string backend = "flow";
  TransportAssumptions transport;
  // Fixed cost of each pass after a device's first (gradient accumulation: another launch of the
  // forward and backward, and a read-modify-write of the gradient buffer).
  double pass_overhead_s = 0.2;
};

// What the policy sees of a composition, scaled to about [0, 1] (docs/hydra.md §6): for every
// device, its seconds per sample, its micro-batch limit as a share of the batch, and its upload and
// download; for every ordered pair, the one-way latency and the rate the links allow.
std::vector<double> placement_features(const scenarios::Scenario& composition, const TransportAssumptions& transport);

class StepTimeModel {
 public:
  // Throws std::invalid_argument when the scenario has no device or no workload batch.
  StepTimeModel(scenarios::Scenario composition, PlacementConfig config);

  std::size_t devices() const { return device_peers_.size(); }
  std::uint64_t batch() const { return composition_.workload.target_batch; }
  const scenarios::Scenario& composition() const { return composition_; }
  const std::string& device_name(std::size_t d) const { return composition_.peers[device_peers_[d]].name; }
  double device_sps(std::size_t d) const { return composition_.peers[device_peers_[d]].compute_sps; }

  // Seconds until the slowest device has computed its share (sizes indexed by device; they must
  // sum to the batch).
  double compute_seconds(std::span<const std::uint64_t> sizes) const;
  // Seconds of one all-reduce among the devices with a non-zero size, simulated once per set.
  double averaging_seconds(std::span<const std::uint64_t> sizes);
  double step_seconds(std::span<const std::uint64_t> sizes) { return compute_seconds(sizes) + averaging_seconds(sizes); }

  // DeDLOC's planner on the same composition (docs/dedloc.md §2): it chooses which devices compute
  // (maximising min(compute rate, averaging rate)); those compute shares proportional to their
  // speed, then the round follows the planner's fractions, auxiliary peers included.
  struct PlannerStep {
    std::vector<std::uint64_t> sizes;
    double compute_s = 0, averaging_s = 0;
    double step_s() const { return compute_s + averaging_s; }
  };
  PlannerStep planner_step();
  std::size_t simulated_rounds() const { return rounds_simulated_; }

 private:
  double simulate_round(const scenarios::Scenario& sc, core::averaging::Strategy strategy);

  scenarios::Scenario composition_;
  PlacementConfig config_;
  std::vector<std::size_t> device_peers_;         // peer index of each device
  std::map<std::vector<bool>, double> averaging_;  // members -> round seconds
  std::size_t rounds_simulated_ = 0;
};

// The batch split in proportion to `weights`, by the rule that splits a gradient into spans
// (core::averaging::apportion: largest remainder, ties to the lower index, nothing to a zero
// weight); all weights zero splits it equally.
std::vector<std::uint64_t> split_batch(std::uint64_t batch, std::span<const double> weights);
std::vector<std::uint64_t> equal_split(std::uint64_t batch, std::size_t devices);
// In proportion to each device's samples/s.
std::vector<std::uint64_t> proportional_split(const StepTimeModel& model);

}  // namespace swarmlab::sim
