// swarmlab validate: simulated versus measured averaging time, per strategy; with --train, a live
// training run against its simulated twin (steps per hour, averaging time and samples per step).
#include <iomanip>
#include <iostream>
#include <memory>

#include "cli/checks.h"
#include "cli/command.h"
#include "exec/link_emulator.h"
#include "exec/live_scenario.h"
#include "exec/validate.h"
#include "exec/validate_training.h"
#include "learn/fashion_mnist.h"

namespace swarmlab::cli {
namespace {

struct ValidateArgs {
  exec::ValidateOptions o;
  std::vector<std::string> strategies;
  std::string codec;
  std::uint64_t parameters = 0;
  bool json = false, quiet = false;
  bool train = false;
  exec::TrainLaunch training;
};

int print_training_validation(const exec::TrainingValidateResult& r, bool json) {
  if (json) {
    std::cout << exec::training_validate_json(r) << "\n";
  } else {
    std::cout << r.scenario << " training: simulated (flow, DHT coordination, goodput " << r.goodput
              << ", the compute speeds measured live) vs live behind emulated links"
              << (r.latency_emulated ? "" : " without added latency (no netem)") << ", scale " << r.scale << ", "
              << r.parameters << " parameters; " << r.live_steps << " live steps in " << std::fixed << std::setprecision(1)
              << r.duration_s << " s\n";
    std::cout << "metric              predicted    measured   ratio\n";
    for (const auto& m : r.metrics)
      std::cout << std::left << std::setw(18) << m.name << std::right << std::fixed << std::setprecision(3) << std::setw(11)
                << m.predicted << std::setw(12) << m.measured << std::setw(8) << m.ratio() << "\n";
    std::cout << "live run: " << (r.live_ok ? "ok" : "FAILED") << "\n";
  }
  if (r.interrupted) return 130;
  return r.live_ok ? kExitOk : kExitFailure;
}

const bool validate_registered = register_command(
    "validate", "Simulate a scenario and run it live; print predicted and measured averaging time per strategy",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ValidateArgs>();
      sub.add_option("scenario", a->o.scenario_path, "scenario JSON file")->required();
      sub.add_flag("--emulate-links", a->o.emulate_links, "run live behind emulated links (needs root)");
      sub.add_flag("--nat", a->o.nat_clients, "with --emulate-links: client-mode peers behind their own NAT in the live runs");
      sub.add_option("--scale", a->o.scale, "multiply every link rate by this, in both the simulation and the live run")->check(Positive(1000, "a scale factor"))->capture_default_str();
      sub.add_option("--strategies", a->strategies, "subset of ar,ps,ours,hd (default: ar,ps,ours)")->delimiter(',')->check(CLI::IsMember(core::names_of(core::averaging::kStrategyNames)));
      sub.add_option("--rounds", a->o.rounds, "live rounds per strategy (the first is a warm-up)")->check(Count(1, 1000, "a number of rounds"))->capture_default_str();
      sub.add_option("--parameters", a->parameters, "vector length (default: the scenario's)");
      sub.add_option("--codec", a->codec, "wire precision (default: the scenario's)")->check(CLI::IsMember(core::names_of(core::codec::kCodecNames)));
      sub.add_option("--goodput", a->o.goodput, "transport goodput used for the prediction and the plan (default: the measured constant)");
      sub.add_option("--congestion", a->o.congestion_control, "TCP congestion control of the live runs ('' for the system's)")->capture_default_str();
      sub.add_flag("--calibrate", a->o.calibrate, "first measure this transport's goodput over one emulated link and predict with it");
      sub.add_option("--out", a->o.out_dir, "output folder (default: out/<scenario>-validate)");
      sub.add_flag("--train", a->train, "compare a live training run (needs --emulate-links) with its simulation instead of averaging rounds");
      sub.add_option("--model", a->training.model, "--train: the model")->check(CLI::IsMember({"linear", "cnn", "mlp"}))->capture_default_str();
      sub.add_option("--steps", a->training.steps, "--train: global steps of the live run")->check(Count(3, 10000000, "a number of steps"))->capture_default_str();
      sub.add_option("--compute-scale", a->training.compute_scale, "--train: each peer computes at its scenario compute_sps x this")
          ->check(Positive(1000, "a scale factor"))->capture_default_str();
      sub.add_option("--dpu", a->training.dpu, "--train: delayed parameter updates on or off (default: the scenario's)")->check(CLI::IsMember({"on", "off"}));
      sub.add_flag("--json", a->json, "JSON output");
      sub.add_flag("--quiet", a->quiet, "no progress lines");
      return [a] {
        exec::ValidateOptions o = a->o;
        if (!a->strategies.empty()) {
          o.strategies.clear();
          for (const auto& s : a->strategies) o.strategies.push_back(*core::parse_name(core::averaging::kStrategyNames, s));
        }
        if (!a->codec.empty()) o.precision = core::codec::parse_codec(a->codec);
        if (a->parameters) o.parameters = a->parameters;
        if (o.emulate_links)
          if (const std::string why = exec::LinkEmulator::unavailable_reason(); !why.empty()) {
            std::cerr << "swarmlab validate: --emulate-links: " << why << "\n";
            return kExitBadInput;
          }
        if (o.nat_clients && !o.emulate_links)
          throw core::InputError("command line", "--nat", "expected --emulate-links as well (the NAT routers are part of the emulated network)");
        if (!a->quiet) o.progress = [](const std::string& line) { std::cerr << "validate: " << line << "\n"; };
        if (a->train) {
          if (!o.emulate_links)
            throw core::InputError("command line", "--train",
                                   "expected --emulate-links as well (on loopback the scenario's links only inform the planner: "
                                   "there is no network to predict)");
          // A dataset every peer would fail on is reported here, once, with the file and the place.
          learn::load_fashion_mnist(learn::Split::Train, learn::kFashionMnistDir);
          exec::TrainingValidateOptions t;
          t.scenario_path = o.scenario_path;
          t.train = a->training;
          t.train.evaluate_every = 0;
          t.scale = o.scale;
          t.goodput = o.goodput;
          t.precision = o.precision;
          t.out_dir = o.out_dir;
          t.congestion_control = o.congestion_control;
          t.progress = o.progress;
          return print_training_validation(exec::validate_training(t), a->json);
        }
        const exec::ValidateResult r = exec::validate(o);
        if (a->json) {
          std::cout << exec::validate_json(r) << "\n";
        } else {
          std::cout << r.scenario << ": simulated (flow, goodput " << r.goodput << ") vs live, scale " << r.scale << ", "
                    << r.parameters << " parameters (" << r.codec << "), "
                    << (r.emulated_links ? (r.latency_emulated ? "emulated links" : "emulated links without added latency (no netem)")
                                         : "loopback (links not emulated: the prediction is for the scenario's links)")
                    << "\n";
          std::cout << "strategy  predicted_s  measured_s   ratio  live\n";
          for (const auto& row : r.rows)
            std::cout << std::left << std::setw(8) << row.strategy << std::right << std::fixed << std::setprecision(3)
                      << std::setw(13) << row.predicted_s << std::setw(12) << row.measured_s << std::setw(8)
                      << row.ratio() << "  " << (row.live_ok ? "ok" : "FAILED") << "\n";
        }
        if (r.interrupted) return 130;
        for (const auto& row : r.rows)
          if (!row.live_ok) return kExitFailure;
        return kExitOk;
      };
    });

}  // namespace
}  // namespace swarmlab::cli
