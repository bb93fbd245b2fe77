#pragma once
// Comparing two settings over the same compositions (`swarmlab compare`): two sweeps, or one sweep
// with an axis (e.g. the strategy) whose two values are compared. Runs are paired by composition
// (the values of every other axis) and seed; per composition the change is
// candidate / baseline - 1 of the metric, averaged over seeds, with a 95% confidence interval
// (Student's t over the paired seeds). Over compositions: the share where the change helps (moves
// the metric the better way), where it helps or hurts significantly (the interval excludes 0),
// the median, and the worst and best compositions.
#include <optional>
#include <string>
#include <vector>

#include "sweep/result_table.h"

namespace swarmlab::sweep {

struct CompareOptions {
  std::string metric;     // default: the sweep's primary metric
  std::string axis;       // one sweep: the axis compared (default: "strategy", or the only crossed axis)
  std::string baseline;   // one sweep: the axis value compared against (default: its first value)
  std::string candidate;  // one sweep: the other value (default: its second value)
};

struct CompositionChange {
  std::vector<std::string> values;  // of Comparison::key_axes
  std::size_t pairs = 0;            // seeds with both runs ok
  double baseline_mean = 0, candidate_mean = 0;
  double change = 0;                // mean over seeds of candidate / baseline - 1
  double ci_low = 0, ci_high = 0;   // NaN with fewer than 2 pairs
  bool helps = false;
  bool significant = false;         // the interval excludes 0
};

struct Comparison {
  std::string metric;
  bool higher_is_better = false;
  std::string baseline, candidate;   // labels: sweep names, or axis=value
  std::vector<std::string> key_axes;
  std::vector<CompositionChange> rows;  // compositions with at least one pair, in table order
  std::size_t unpaired = 0;             // compositions with no pair (failed or missing runs)
  double share_helps = 0, share_helps_significantly = 0, share_hurts_significantly = 0;
  double median_change = 0;
  std::optional<std::size_t> worst, best;  // into rows
};

Comparison compare_sweeps(const ResultTable& baseline, const ResultTable& candidate, const CompareOptions& o);
Comparison compare_within(const ResultTable& sweep, const CompareOptions& o);

// compare.csv (one row per composition) and compare.json (the summary) in `dir`.
void write_comparison(const Comparison& c, const std::string& dir);
// The summary as text (what the command prints).
std::string describe(const Comparison& c);

}  // namespace swarmlab::sweep
