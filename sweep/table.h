#pragma once
// The sweep's tidy outputs, rebuilt from the result files after every (partial) sweep:
//   results.csv   one row per run that has a result, in run order: run, composition, seed, the
//                 axes, peers, client_peers, status, the metrics (sweep/columns.h), error. A pure
//                 function of the spec and the results: byte-identical for every --jobs and MPI
//                 layout, except the wall_s column appended with `with_wall_time`.
//   runs_wall.csv run, wall_s, where: how long each run took and where (not deterministic).
//   sweep.json    what the table holds: the axes (numeric or categorical, crossed), the metrics
//                 and which way is better, counts. Read by `swarmlab compare` and the plots.
#include <optional>
#include <vector>

#include "sweep/plan.h"
#include "sweep/run.h"
#include "sweep/spec.h"
#include "sweep/store.h"

namespace swarmlab::sweep {

struct TableCounts {
  std::size_t runs = 0, done = 0, ok = 0, failed = 0;
};

TableCounts write_tables(const SweepSpec& spec, const SweepPlan& plan, const std::vector<std::optional<RunResult>>& results,
                         const RunStore& store, bool with_wall_time);

// Whether every value an axis can take is a number (plots treat it as continuous).
bool is_numeric_axis(const Axis& axis);

}  // namespace swarmlab::sweep
