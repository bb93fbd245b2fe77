#pragma once
// One run of a sweep: materialise its scenario, run the experiment the spec names (the
// simulator's sim::run_averaging or sim::run_training; the sweep decides nothing about the
// protocol), and keep its metrics. A run that throws is a result too, with its error.
//
// A result is deterministic: the same spec gives byte-identical result files on any machine, any
// number of jobs and any MPI layout. Wall time is kept apart (sweep/store.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/experiments/run_cost.h"
#include "sweep/plan.h"
#include "sweep/spec.h"

namespace swarmlab::sweep {

enum class Status { Ok, Error, Crashed };
inline constexpr core::Named<Status> kStatusNames[] = {
    {Status::Ok, "ok"}, {Status::Error, "error"}, {Status::Crashed, "crashed"}};

struct RunResult {
  std::size_t index = 0, composition = 0;
  std::uint64_t seed = 0;
  std::string key;                      // sweep/materialize.h run_key
  std::vector<json> values;             // the axes', in spec order
  std::optional<std::size_t> peers, client_peers;  // of the materialised scenario
  Status status = Status::Ok;
  std::string error;                    // status != ok
  std::vector<std::pair<std::string, std::optional<double>>> metrics;  // sweep/columns.h order; empty unless ok
};

// Never throws for a problem of the run itself: that becomes status error. So does a run whose
// estimated cost exceeds `budget` (sim/experiments/run_cost.h, the bound swarmlab sim and train
// check): it is not started, and its error gives the estimate and the flags that raise the budget.
RunResult execute_run(const SweepSpec& spec, const RunDesc& run, const sim::RunBudget& budget);

// The simulated events the run is expected to take (sim/experiments/run_cost.h), to hand the
// costliest runs out first. 0 for a run whose scenario cannot be built: it fails at once.
double expected_events(const SweepSpec& spec, const RunDesc& run);

// A result that records why a run produced none (a worker that died).
RunResult failed_result(const SweepSpec& spec, const RunDesc& run, Status status, std::string error);

// The result file's JSON, and back. from_json throws std::runtime_error on a malformed file.
std::string to_json_text(const SweepSpec& spec, const RunResult& r);
RunResult result_from_json(const SweepSpec& spec, const std::string& text);

}  // namespace swarmlab::sweep
