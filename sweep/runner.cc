#include "sweep/runner.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>

#include "sweep/dispatch_order.h"
#include "sweep/local_pool.h"
#include "sweep/materialize.h"
#include "sweep/mpi_pool.h"
#include "sweep/plan.h"
#include "sweep/run.h"
#include "sweep/store.h"

namespace swarmlab::sweep {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Temporary files a killed writer left behind.
void remove_leftovers(const std::filesystem::path& runs) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(runs, ec))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) std::filesystem::remove(e.path(), ec);
}

}  // namespace

std::vector<std::size_t> dispatch_sequence(const SweepSpec& spec, const SweepPlan& plan,
                                           const std::vector<std::size_t>& pending, unsigned workers) {
  std::vector<double> cost(pending.size());
  for (std::size_t k = 0; k < pending.size(); ++k) cost[k] = expected_events(spec, plan.runs[pending[k]]);
  std::vector<std::size_t> order;
  order.reserve(pending.size());
  for (const std::size_t k : dispatch_order(cost, workers)) order.push_back(pending[k]);
  return order;
}

SweepOutcome run_sweep(const SweepSpec& spec, const SweepOptions& o, const MpiSession& mpi) {
  const SweepPlan plan = make_plan(spec);
  std::vector<std::string> keys(plan.runs.size());
  for (const auto& run : plan.runs) keys[run.index] = run_key(spec, run);
  const bool distributed = mpi.active() && mpi.size() > 1;

  SweepOutcome out;
  if (distributed && mpi.rank() != 0) {
    out.worker = true;
    mpi_worker(mpi, [&](std::size_t index, const std::string& key) {
      const auto start = Clock::now();
      MpiResult r;
      r.index = index;
      const RunDesc* run = index < plan.runs.size() ? &plan.runs[index] : nullptr;
      const RunResult result =
          run && keys[index] == key
              ? execute_run(spec, *run, o.budget)
              : failed_result(spec, run ? *run : plan.runs.front(), Status::Error,
                              "MPI rank " + std::to_string(mpi.rank()) + " on " + mpi.host() +
                                  " planned a different run " + std::to_string(index) +
                                  ": the spec or its files differ between ranks");
      r.json = to_json_text(spec, result);
      r.wall = {seconds_since(start), "rank " + std::to_string(mpi.rank()) + " on " + mpi.host()};
      return r;
    });
    return out;
  }

  bool workers_waiting = distributed;  // until mpi_master has told each of them to stop
  try {
    OutputLock lock(o.out);
    RunStore store(o.out, plan.runs.size());
    remove_leftovers(o.out + "/runs");
    std::vector<std::optional<RunResult>> results(plan.runs.size());
    std::vector<std::size_t> pending;
    SweepProgress progress;
    progress.total = plan.runs.size();
    for (const auto& run : plan.runs) {
      auto stored = store.read(spec, run, keys[run.index]);
      if (stored && !(o.retry_failed && stored->status != Status::Ok)) {
        progress.failed += stored->status != Status::Ok;
        results[run.index] = std::move(stored);
        ++progress.done;
      } else {
        pending.push_back(run.index);
      }
    }
    out.skipped = progress.done;
    progress.to_run = pending.size();
    pending = dispatch_sequence(spec, plan, pending, distributed ? mpi.size() - 1 : o.jobs);
    const auto start = Clock::now();
    const auto record = [&](std::size_t index, RunResult r) {
      progress.failed += r.status != Status::Ok;
      ++progress.done;
      ++progress.ran;
      ++out.ran;
      results[index] = std::move(r);
      progress.elapsed_s = seconds_since(start);
      if (o.progress) o.progress(progress);
    };
    if (o.progress) o.progress(progress);

    if (distributed) {
      out.where = "MPI, " + std::to_string(mpi.size()) + " ranks (" + std::to_string(mpi.size() - 1) + " running)";
      mpi_master(mpi, pending, keys, [&](const MpiResult& m) {
        write_atomic(store.result_path(m.index), m.json);
        store.write_wall(m.index, m.wall);
        auto r = store.read(spec, plan.runs[m.index], keys[m.index]);
        record(m.index, r ? std::move(*r)
                          : failed_result(spec, plan.runs[m.index], Status::Error, "the worker's result could not be read"));
      });
      workers_waiting = false;
    } else {
      out.where = std::to_string(o.jobs) + " local process" + (o.jobs == 1 ? "" : "es");
      const bool finished = run_forked(
          pending, o.jobs,
          [&](std::size_t index) {
            const auto t0 = Clock::now();
            const RunResult r = execute_run(spec, plan.runs[index], o.budget);
            store.write_wall(index, {seconds_since(t0), "local pid " + std::to_string(::getpid())});
            store.write(spec, r);
            return 0;
          },
          [&](std::size_t index, const ChildExit& e) {
            const RunDesc& run = plan.runs[index];
            if (e.exited && e.code == 0) {
              auto r = store.read(spec, run, keys[index]);
              record(index, r ? std::move(*r) : failed_result(spec, run, Status::Error, "the worker's result could not be read"));
              return;
            }
            if (!e.exited && is_interruption(e.signal)) return;  // not the run's fault: a rerun tries it again
            const RunResult r =
                e.exited ? failed_result(spec, run, Status::Error, "the worker process exited with status " + std::to_string(e.code))
                         : failed_result(spec, run, Status::Crashed,
                                         "the worker process died of signal " + std::to_string(e.signal) + " (" +
                                             strsignal(e.signal) + ")");
            store.write(spec, r);
            record(index, r);
          });
      out.interrupted = !finished;
    }
    for (const auto& r : results) out.missing += !r;
    out.counts = write_tables(spec, plan, results, store, o.with_wall_time);
  } catch (...) {
    if (workers_waiting) mpi_stop_workers(mpi);
    throw;
  }
  return out;
}

}  // namespace swarmlab::sweep
