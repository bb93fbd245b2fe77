#pragma once
// Runs across MPI ranks: rank 0 hands out one run at a time to whichever rank asks (so a slow run
// never idles the others) and gathers every result; ranks 1..K-1 run them. Only rank 0 touches the
// output folder. Every rank builds the plan from the same spec (its files must be readable on
// every node, as on a cluster's shared filesystem); each work item carries the run's key, and a
// rank whose plan disagrees reports an error for that run instead of running something else.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "sweep/mpi_session.h"
#include "sweep/store.h"

namespace swarmlab::sweep {

struct MpiResult {
  std::size_t index = 0;
  std::string json;  // the result file's text
  WallRecord wall;
};

// Rank 0. Calls `on_result` for each result as it arrives. With `abort_workers` (after an error
// on rank 0) it only tells every worker to stop.
void mpi_master(const MpiSession& mpi, const std::vector<std::size_t>& items, const std::vector<std::string>& keys,
                const std::function<void(const MpiResult&)>& on_result);
void mpi_stop_workers(const MpiSession& mpi);

// Ranks > 0: `run(index, key)` runs one item and returns its result.
void mpi_worker(const MpiSession& mpi, const std::function<MpiResult(std::size_t, const std::string&)>& run);

}  // namespace swarmlab::sweep
