// swarmlab sweep: run a sweep spec's runs across local cores (or MPI ranks under mpirun/srun),
// resumably, and write the tidy table (sweep/README.md).
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/checks.h"
#include "cli/command.h"
#include "cli/progress.h"
#include "sweep/materialize.h"
#include "sweep/plan.h"
#include "sweep/runner.h"
#include "sweep/spec_loader.h"

namespace swarmlab::cli {
namespace {

struct SweepArgs {
  std::string spec;
  std::string out;
  unsigned jobs = 0;
  std::string mpi = "auto";
  bool no_wall_time = false;
  bool retry_failed = false;
  bool quiet = false;
  bool dry_run = false;
  long long scenario_of = -1;
  sim::RunBudget budget;
};

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const long long t = std::llround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", t / 3600, t / 60 % 60);
  else if (t >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", t / 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%llds", t);
  return buf;
}

unsigned default_jobs() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

int print_plan(const sweep::SweepSpec& spec) {
  const sweep::SweepPlan plan = sweep::make_plan(spec);
  std::printf("%s: %zu runs = %zu compositions x %zu seeds (%s sampling)\n", spec.name.c_str(), plan.runs.size(),
              plan.compositions, spec.seeds.size(), std::string(core::name_of(sweep::kMethodNames, spec.sampling.method)).c_str());
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    std::vector<std::string> seen;
    for (const auto& run : plan.runs) {
      const std::string v = run.values[k].dump();
      if (std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
    }
    std::printf("  %-24s %-14s %zu distinct value%s%s\n", spec.axes[k].name.c_str(),
                std::string(core::name_of(sweep::kTargetNames, spec.axes[k].target)).c_str(), seen.size(),
                seen.size() == 1 ? "" : "s", spec.axes[k].crossed ? " (crossed)" : "");
  }
  return kExitOk;
}

int print_scenario(const sweep::SweepSpec& spec, long long index) {
  const sweep::SweepPlan plan = sweep::make_plan(spec);
  if (index < 0 || static_cast<std::size_t>(index) >= plan.runs.size())
    throw std::invalid_argument("--scenario-of: expected a run number from 0 to " + std::to_string(plan.runs.size() - 1) +
                                ", got " + std::to_string(index));
  const sweep::Materialized m = sweep::materialize(spec, plan.runs[static_cast<std::size_t>(index)]);
  std::cout << m.scenario_json.dump(2) << "\n";
  for (const auto& a : spec.axes)
    if (a.target == sweep::Target::ChurnPerHour)
      std::cerr << "note: axis " << a.name << " adds a generated churn trace, which this JSON does not hold\n";
  return kExitOk;
}

const bool sweep_registered = register_command(
    "sweep", "Run a sweep spec (a base scenario and axes) across cores or MPI ranks; write a tidy CSV",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<SweepArgs>();
      sub.add_option("spec", a->spec, "sweep spec JSON file (sweep/README.md)")->required();
      sub.add_option("--out", a->out, "output folder (default: out/sweeps/<name>); rerunning resumes it");
      sub.add_option("--jobs,-j", a->jobs, "local processes (default: one per core)")->check(CLI::Range(1u, 4096u));
      sub.add_option("--mpi", a->mpi, "auto: use MPI when started by mpirun or srun; on; off")
          ->check(CLI::IsMember({"auto", "on", "off"}))
          ->capture_default_str();
      sub.add_flag("--no-wall-time", a->no_wall_time,
                   "leave the wall_s column out of results.csv, which is then byte-identical for every --jobs and "
                   "MPI layout (runs_wall.csv always has the times)");
      sub.add_flag("--retry-failed", a->retry_failed, "run again the runs stored as failed");
      add_budget_options(sub, a->budget);
      sub.add_flag("--quiet", a->quiet, "no progress bar");
      sub.add_flag("--dry-run", a->dry_run, "print the plan (runs, compositions, axis values) and run nothing");
      sub.add_option("--scenario-of", a->scenario_of, "print the scenario JSON of run N and run nothing");
      return [a]() -> int {
        const sweep::MpiMode mode = a->mpi == "on" ? sweep::MpiMode::On : a->mpi == "off" ? sweep::MpiMode::Off : sweep::MpiMode::Auto;
        const sweep::MpiSession mpi(mode);
        const bool speaks = !mpi.active() || mpi.rank() == 0;  // one rank reports, not K
        sweep::SweepSpec spec;
        try {
          spec = sweep::load_sweep_spec(a->spec);
          if (a->dry_run) return speaks ? print_plan(spec) : kExitOk;
          if (a->scenario_of >= 0) return speaks ? print_scenario(spec, a->scenario_of) : kExitOk;
        } catch (...) {
          if (!speaks) return kExitBadInput;
          throw;
        }
        sweep::SweepOptions o;
        o.out = a->out.empty() ? "out/sweeps/" + spec.name : a->out;
        o.jobs = a->jobs ? a->jobs : default_jobs();
        o.with_wall_time = !a->no_wall_time;
        o.retry_failed = a->retry_failed;
        o.budget = a->budget;
        auto bar = std::make_shared<Progress>("sweep " + spec.name, a->quiet);
        o.progress = [bar](const sweep::SweepProgress& p) {
          std::string note = p.failed ? std::to_string(p.failed) + " failed" : "";
          if (p.ran > 0 && p.elapsed_s > 0) {
            const double per_min = 60.0 * static_cast<double>(p.ran) / p.elapsed_s;
            const double eta = p.elapsed_s / static_cast<double>(p.ran) * static_cast<double>(p.to_run - p.ran);
            char buf[96];
            std::snprintf(buf, sizeof buf, "%s%.0f runs/min, ETA %s", note.empty() ? "" : ", ", per_min,
                          duration_text(eta).c_str());
            note += buf;
          }
          bar->update(p.done, p.total, note);
        };
        const auto t0 = std::chrono::steady_clock::now();
        const sweep::SweepOutcome r = sweep::run_sweep(spec, o, mpi);
        if (r.worker) return kExitOk;
        bar.reset();  // clear the bar before the summary
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%s: %zu runs, %zu with results (%zu ok, %zu failed); %zu reused, %zu run now on %s in %.1f s",
                    spec.name.c_str(), r.counts.runs, r.counts.done, r.counts.ok, r.counts.failed, r.skipped, r.ran,
                    r.where.c_str(), wall);
        if (r.ran > 0 && wall > 0) std::printf(" (%.1f runs/min)", 60.0 * static_cast<double>(r.ran) / wall);
        std::printf("\nwrote %s/results.csv, runs_wall.csv, sweep.json\n", o.out.c_str());
        if (r.interrupted) {
          std::printf("interrupted: %zu runs left; run the same command again to resume\n", r.missing);
          return 130;
        }
        if (r.missing) std::printf("%zu runs were stopped from outside (killed); run the same command again to retry them\n", r.missing);
        if (r.counts.failed) std::printf("%zu runs failed: see the error column; --retry-failed runs them again\n", r.counts.failed);
        return r.missing || r.counts.failed ? kExitFailure : kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
