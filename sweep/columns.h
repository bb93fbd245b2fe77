#pragma once
// The tidy table's columns: the fixed ones every sweep has, and the metrics each experiment
// reports (sweep/run.h computes them). Axis columns sit between them, in spec order.
#include <span>
#include <string_view>

#include "sweep/spec.h"

namespace swarmlab::sweep {

struct Metric {
  std::string_view name;
  bool higher_is_better;
  std::string_view meaning;
};

inline constexpr Metric kAveragingMetrics[] = {
    {"mean_round_s", false, "mean duration of an averaging round, s"},
    {"max_round_s", false, "longest round, s"},
    {"rounds", true, "rounds completed"},
    {"failures", false, "members that left during a round, summed over rounds"},
    {"incomplete", false, "surviving members whose round timed out, summed over rounds"},
    {"fraction_averaged_min", true, "smallest share of the vector averaged, over rounds and senders"},
    {"gb_sent_per_round", false, "bytes all peers sent per round, 10^9"},
    {"events", false, "simulator events processed"},
};

inline constexpr Metric kTrainingMetrics[] = {
    {"steps_per_hour", true, "global optimizer steps per simulated hour"},
    {"steps", true, "global optimizer steps"},
    {"mean_round_s", false, "time with an averaging round in flight per step, s"},
    {"mean_utilisation", true, "compute peers' device busy share"},
    {"state_downloads", false, "state downloads by peers that joined or fell behind"},
    {"samples_lost", false, "computed samples that never reached a step"},
    {"max_left_out_share", false, "largest share of eligible steps a peer was left out of"},
    {"traffic_gb_per_hour", false, "mean traffic per compute peer and hour up, 10^9 bytes"},
    {"events", false, "simulator events processed"},
};

inline std::span<const Metric> metrics_of(Experiment e) {
  if (e == Experiment::Training) return kTrainingMetrics;
  return kAveragingMetrics;
}

// The metric a comparison uses by default: round time for averaging, steps/h for training.
inline const Metric& primary_metric(Experiment e) { return metrics_of(e)[0]; }

// Columns before the axes, and after them (then the metrics, then error).
inline constexpr std::string_view kLeadingColumns[] = {"run", "composition", "seed"};
inline constexpr std::string_view kDerivedColumns[] = {"peers", "client_peers", "status"};
inline constexpr std::string_view kErrorColumn = "error";
inline constexpr std::string_view kWallColumn = "wall_s";

inline bool is_reserved_column(std::string_view name) {
  for (auto c : kLeadingColumns) if (c == name) return true;
  for (auto c : kDerivedColumns) if (c == name) return true;
  for (const auto& m : kAveragingMetrics) if (m.name == name) return true;
  for (const auto& m : kTrainingMetrics) if (m.name == name) return true;
  return name == kErrorColumn || name == kWallColumn;
}

}  // namespace swarmlab::sweep
