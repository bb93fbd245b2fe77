#pragma once
// Runs a sweep: plans it, skips the runs whose results are already stored (with the same key),
// runs the others across local processes or MPI ranks, and writes the tidy table. Rerunning a
// sweep resumes it; a run that fails is stored with its error and the sweep goes on.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sim/experiments/run_cost.h"
#include "sweep/mpi_session.h"
#include "sweep/plan.h"
#include "sweep/spec.h"
#include "sweep/table.h"

namespace swarmlab::sweep {

struct SweepProgress {
  std::size_t total = 0;       // runs in the plan
  std::size_t done = 0;        // with a result (stored before or now)
  std::size_t failed = 0;      // of those, not ok
  std::size_t ran = 0;         // finished in this invocation
  std::size_t to_run = 0;      // runs this invocation started with
  double elapsed_s = 0;        // since this invocation started running
};

struct SweepOptions {
  std::string out;             // the output folder
  unsigned jobs = 1;           // local processes (ignored under MPI: one run per worker rank)
  bool with_wall_time = true;  // append wall_s to results.csv (the only column that is not deterministic)
  bool retry_failed = false;   // run again the runs stored as failed
  sim::RunBudget budget;       // a run estimated past it is stored as failed, not run (run.h)
  std::function<void(const SweepProgress&)> progress;  // on the process that gathers results
};

struct SweepOutcome {
  bool worker = false;         // an MPI worker rank: nothing else below is set
  bool interrupted = false;
  std::size_t skipped = 0;     // stored results reused
  std::size_t ran = 0;
  std::size_t missing = 0;     // runs without a result at the end (interrupted or killed)
  TableCounts counts;
  std::string where;           // "2 local processes", "MPI, 3 ranks"
};

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& options, const MpiSession& mpi);

// The order in which run_sweep hands the `pending` runs of `plan` to `workers` workers: by their
// expected events (run.h), costliest first (sweep/dispatch_order.h). In spec order a long run that
// comes last keeps one worker busy while the others sit idle.
std::vector<std::size_t> dispatch_sequence(const SweepSpec& spec, const SweepPlan& plan,
                                           const std::vector<std::size_t>& pending, unsigned workers);

}  // namespace swarmlab::sweep
