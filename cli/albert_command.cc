// swarmlab albert: the five ALBERT-large setups of DeDLOC (docs/dedloc.md §6) trained for a
// simulated 48 h; optimizer steps per hour and speed relative to high-bandwidth, with what explains
// each gap.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "analysis/training_report.h"
#include "cli/checks.h"
#include "cli/command.h"
#include "scenarios/applicability.h"
#include "sim/experiments/run_cost.h"
#include "cli/data_paths.h"
#include "cli/progress.h"
#include "cli/python_script.h"
#include "scenarios/scenario_loader.h"
#include "sim/network/backend.h"
#include "sim/experiments/training_experiment.h"
#include "sweep/dispatch_order.h"
#include "sweep/local_pool.h"

namespace swarmlab::cli {
namespace {

struct AlbertArgs {
  std::string backend = "flow";
  std::string scenario_dir;
  std::string out;
  double hours = 48;
  std::string coordination = "oracle";
  bool json = false;
  bool quiet = false;
  unsigned jobs = 0;  // 0: one per core, at most one per setup
  sim::RunBudget budget;
};

constexpr const char* kSetups[] = {"high-bandwidth", "heterogeneous", "heterogeneous-lb", "auxiliary", "time-varying"};

std::string fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

// Why a setup runs at the speed it does, from its own metrics.
std::string explain(const scenarios::Scenario& sc, const sim::TrainingRunResult& r) {
  double sps = 0;
  for (const auto& p : sc.peers) sps += p.compute_sps;
  const double period = r.steps ? r.duration_s / static_cast<double>(r.steps) : 0;
  std::string s = "a step every " + fixed(period, 1) + " s: ";
  if (sc.churn.events.empty())
    s += fixed(static_cast<double>(sc.workload.target_batch) / sps, 1) + " s of compute for the batch";
  else
    s += "compute for the batch from the peers up at the time (part-time peers alternate 8 h on / 8 h off)";
  s += r.dpu ? " overlapped with " : " then ";
  s += fixed(r.mean_round_s, 1) + " s averaging" + (r.dpu ? " (DPU)" : " in sequence (no DPU)");
  s += "; GPUs busy " + fixed(100 * r.mean_utilisation, 0) + "%, idle " + fixed(r.mean_idle_s / 3600, 1) +
       " h per peer, " + fixed(r.mean_traffic_gb_per_hour, 2) + " GB/h traffic per GPU peer";
  return s;
}

// One setup's figures as `swarmlab albert --json` prints them, less relative_speed, plus the
// wire sizes the assumptions quote.
nlohmann::ordered_json setup_summary(const char* name, const scenarios::Scenario& sc, const sim::TrainingRunResult& r) {
  return {{"name", name},
          {"steps_per_hour", r.steps_per_hour},
          {"relative_speed", 0},
          {"steps", r.steps},
          {"dpu", r.dpu},
          {"coordination", r.coordination},
          {"mean_round_s", r.mean_round_s},
          {"averaging_s", r.averaging_s},
          {"mean_utilisation", r.mean_utilisation},
          {"mean_idle_s", r.mean_idle_s},
          {"mean_traffic_gb_per_hour", r.mean_traffic_gb_per_hour},
          {"state_downloads", r.state_downloads},
          {"update_downloads", r.update_downloads},
          {"rounds", r.rounds},
          {"max_left_out_share", r.max_left_out_share},
          {"ledger_balanced", r.ledger.balanced() && r.ledger.pending == r.pending_check},
          {"samples_lost", r.ledger.lost},
          {"samples_discarded", r.ledger.discarded},
          {"peers", sc.peers.size()},
          {"explanation", explain(sc, r)},
          {"gradient_bytes", r.gradient_bytes},
          {"state_bytes", r.state_bytes}};
}

// Runs the setups in up to `jobs` processes at once (each run is single-threaded and shares
// nothing with the others), in the order that ends soonest by their expected events
// (sweep/dispatch_order.h), and returns their summaries in setup order. A
// child hands its summary back as a file: the results are the same whatever runs where.
std::vector<nlohmann::ordered_json> run_setups(const std::vector<scenarios::Scenario>& setups,
                                               const sim::TrainingRunConfig& cfg, const std::string& out,
                                               unsigned jobs, Progress& progress) {
  std::string pattern = (std::filesystem::temp_directory_path() / "swarmlab-albert-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("swarmlab albert: cannot create a temporary folder in " + std::filesystem::temp_directory_path().string());
  const std::filesystem::path tmp = pattern;
  struct RemoveTmp {
    std::filesystem::path dir;
    ~RemoveTmp() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } remove_tmp{tmp};
  const auto summary_path = [&](std::size_t i) { return tmp / (std::to_string(i) + ".json"); };
  std::vector<double> cost(setups.size());
  for (std::size_t i = 0; i < setups.size(); ++i)
    cost[i] = sim::expected_training_events(setups[i], *cfg.duration_s, cfg.dpu.value_or(setups[i].training.dpu), cfg.transport);
  const std::vector<std::size_t> order = sweep::dispatch_order(cost, jobs);
  std::vector<nlohmann::ordered_json> summaries(setups.size());
  std::vector<std::string> errors;
  std::size_t done = 0;
  const bool finished = sweep::run_forked(
      order, jobs,
      [&](std::size_t i) {
        nlohmann::ordered_json summary;
        int code = 0;
        try {
          const sim::TrainingRunResult r = sim::run_training(setups[i], cfg);
          if (!out.empty()) analysis::write_training_outputs(r, out, kSetups[i]);
          summary = setup_summary(kSetups[i], setups[i], r);
        } catch (const std::exception& e) {
          summary = {{"error", e.what()}};
          code = 1;
        }
        std::ofstream(summary_path(i)) << summary.dump();
        return code;
      },
      [&](std::size_t i, const sweep::ChildExit& e) {
        progress.update(++done, setups.size());
        std::ifstream in(summary_path(i));
        nlohmann::ordered_json summary = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
        if (e.exited && e.code == 0 && summary.is_object() && !summary.contains("error")) {
          summaries[i] = std::move(summary);
          return;
        }
        const bool reported = summary.is_object() && summary.contains("error");
        std::string why = reported            ? summary["error"].get<std::string>()
                          : !e.exited         ? "its process died of signal " + std::to_string(e.signal)
                          : e.code == 0       ? "its summary " + summary_path(i).string() + " could not be read"
                                              : "its process exited with status " + std::to_string(e.code);
        errors.push_back(std::string(kSetups[i]) + ": " + why);
      });
  if (!finished) throw std::runtime_error("swarmlab albert: interrupted");
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += (all.empty() ? "" : "; ") + e;
    throw std::runtime_error("swarmlab albert: a setup failed: " + all);
  }
  return summaries;
}

const bool albert_registered = register_command(
    "albert", "DeDLOC ALBERT-large setups trained for a simulated 48 h: steps/hour and relative speed",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<AlbertArgs>();
      sub.add_option("--backend", args->backend, "network backend")
          ->check(CLI::IsMember(sim::available_backends()))
          ->capture_default_str();
      sub.add_option("--scenarios", args->scenario_dir, "folder holding the setups (default: scenarios/albert)");
      sub.add_option("--hours", args->hours, "simulated wall time per setup")->check(Real(0.01, 10000, "a number of hours"))->capture_default_str();
      sub.add_option("--coordination", args->coordination,
                     "oracle: the simulator counts samples and forms groups instantly (seconds); dht: every peer runs the "
                     "DHT progress tracker and matchmaking itself (slower)")
          ->check(CLI::IsMember(core::names_of(scenarios::kCoordinationNames)))
          ->capture_default_str();
      sub.add_option("--out", args->out, "write <setup>.json and CSVs (series, peers, steps) and steps.png here");
      sub.add_flag("--json", args->json, "print JSON");
      sub.add_flag("--quiet", args->quiet, "no progress bar");
      sub.add_option("--jobs", args->jobs, "setups run at once, each in its own process (default: one per core)")
          ->check(CLI::Range(1u, 64u));
      add_budget_options(sub, args->budget);
      return [args] {
        const std::string dir = args->scenario_dir.empty() ? find_data_dir("scenarios/albert") : args->scenario_dir;
        sim::TrainingRunConfig cfg;
        cfg.backend = args->backend;
        cfg.duration_s = args->hours * 3600;
        cfg.coordination = *core::parse_name(scenarios::kCoordinationNames, args->coordination);
        // Every setup is loaded and checked (a collaboration, within the planner's size and the
        // budget) before any runs; --out too.
        std::vector<scenarios::Scenario> loaded;
        for (const char* name : kSetups) {
          loaded.push_back(scenarios::load_scenario(dir + "/" + name + ".json"));
          const scenarios::Scenario& sc = loaded.back();
          scenarios::require_collaboration(sc, "albert");
          if (sc.averaging.strategy == core::averaging::Strategy::Planned) sim::check_planner_size(sc, false, "swarmlab albert");
          sim::check_budget(sim::training_cost(sc, *cfg.duration_s, cfg.dpu.value_or(sc.training.dpu), cfg.transport),
                            args->budget, sc.source,
                            "peers, workload, training.metrics_interval_s");
        }
        if (!args->out.empty()) {
          if (std::any_of(args->out.begin(), args->out.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
            throw core::InputError("command line", "--out",
                                   "expected a folder name without control characters, got " + traces::quoted(args->out));
          prepare_out_dir(args->out, "--out");
        }
        const unsigned jobs = args->jobs ? args->jobs : std::max(1u, std::thread::hardware_concurrency());
        Progress progress("albert", args->quiet || args->json);
        const std::vector<nlohmann::ordered_json> runs = run_setups(loaded, cfg, args->out, jobs, progress);
        const double base = runs[0]["steps_per_hour"].get<double>();
        const auto& first = loaded[0];
        nlohmann::ordered_json j;
        j["backend"] = args->backend;
        j["hours"] = args->hours;
        j["coordination"] = args->coordination;
        auto& setups = j["setups"] = nlohmann::ordered_json::array();
        for (const auto& run : runs) {
          nlohmann::ordered_json setup = run;
          setup.erase("gradient_bytes");
          setup.erase("state_bytes");
          setup["relative_speed"] = base > 0 ? run["steps_per_hour"].get<double>() / base : 0;
          setups.push_back(std::move(setup));
        }
        const double sps = first.peers.empty() ? 0 : first.peers[0].compute_sps;
        j["assumptions"] = {
            {"model", "ALBERT-large (albert-large-v2 + MLM and SOP heads)"},
            {"parameters", first.workload.parameters},
            {"target_batch", first.workload.target_batch},
            {"t4_samples_per_s", sps},
            {"t4_reasoning",
             "estimate, not a published figure: a 512-token sequence costs about 1 TFLOP forward+backward for a "
             "BERT-large-sized encoder; a T4 sustains roughly 10-15 TFLOP/s in mixed precision; NVIDIA's BERT-large "
             "phase-2 rate of about 40 sequences/s on a V100 scaled by a T4's roughly 1/3 gives the same "
             "(scenarios/README.md)"},
            {"wire_precision", std::string(core::codec::name(first.workload.wire_precision))},
            {"gradient_bytes", runs[0]["gradient_bytes"]},
            {"state_bytes", runs[0]["state_bytes"]},
            {"sender_timeout_s", first.averaging.sender_timeout_s.value_or(30)},
            {"reducer_timeout_s", first.averaging.reducer_timeout_s.value_or(60)},
            {"goodput_fraction", cfg.transport.goodput_fraction},
            {"dpu", first.training.dpu},
            {"dpu_reasoning",
             "the 2021 ALBERT runs used hivemind's CollaborativeOptimizer, which averaged inside the optimizer step "
             "(delayed updates came later); with DPU every setup here would be compute-bound and identical"},
            {"coordination",
             args->coordination == "dht"
                 ? "dht: every peer publishes its progress in the DHT (30 s expiration, at least every 10 s), "
                   "estimates the collaboration's, looks for a group with leader/follower matchmaking a lead time "
                   "before the batch is expected (3 x the measured formation overhead, 1-15 s) and averages once "
                   "its estimate reaches the target batch (docs/interpretations.md §24)"
                 : "oracle: exact sample counting (a zero-staleness progress estimate); all peers at the global step "
                   "form one group at once; --coordination dht runs the real progress tracker and matchmaking "
                   "(docs/interpretations.md §17)"}};
        if (!args->out.empty()) {
          std::vector<std::string> plot_args = {args->out + "/steps.png"};
          for (const char* s : kSetups) plot_args.push_back(std::string(s) + "=" + args->out + "/" + s + "_steps.csv");
          const int rc = run_analysis_script("plot_steps.py", plot_args);
          const std::string msg = rc == 0   ? "plot written to " + args->out + "/steps.png"
                                  : rc == 3 ? "plot skipped: python3 with matplotlib not available"
                                            : "plot failed: analysis/plot_steps.py exited with status " + std::to_string(rc);
          j["plot"] = msg;
        }
        if (args->json) {
          std::cout << j.dump(2) << "\n";
          return kExitOk;
        }
        std::cout << "ALBERT-large, " << first.workload.parameters << " parameters, batch " << first.workload.target_batch
                  << ", T4 " << sps << " samples/s, " << core::codec::name(first.workload.wire_precision)
                  << " on the wire, sender/reducer timeouts " << first.averaging.sender_timeout_s.value_or(30) << "/"
                  << first.averaging.reducer_timeout_s.value_or(60) << " s, " << (first.training.dpu ? "DPU" : "no DPU")
                  << ", " << args->hours << " h simulated (" << args->backend << " backend, " << args->coordination
                  << " coordination)\n\n";
        std::cout << "setup              steps/h  relative  round_s  util   GB/h  left_out  ledger\n";
        // (j["setups"], not `setups`: adding keys to an ordered_json moves its members.)
        for (const auto& setup : j["setups"]) {
          const auto v = [&](const char* field) { return setup[field].get<double>(); };
          std::printf("%-17s %8.1f %9.3f %8.2f %4.0f%% %6.2f %8.1f%%  %s\n", setup["name"].get<std::string>().c_str(),
                      v("steps_per_hour"), v("relative_speed"), v("mean_round_s"), 100 * v("mean_utilisation"),
                      v("mean_traffic_gb_per_hour"), 100 * v("max_left_out_share"),
                      setup["ledger_balanced"].get<bool>() ? "balanced" : "UNBALANCED");
        }
        std::cout << "\n";
        for (const auto& setup : j["setups"])
          std::cout << setup["name"].get<std::string>() << ": " << setup["explanation"].get<std::string>() << "\n";
        if (j.contains("plot")) std::cout << std::flush, std::cerr << j["plot"].get<std::string>() << "\n";
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
