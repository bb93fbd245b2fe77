#include "sweep/run.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

#include "sim/experiments/averaging_experiment.h"
#include "sim/experiments/run_cost.h"
#include "sim/experiments/training_experiment.h"
#include "sweep/columns.h"
#include "sweep/materialize.h"

namespace swarmlab::sweep {

namespace {

using Metrics = std::vector<std::pair<std::string, std::optional<double>>>;

std::optional<double> finite(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

// How a run of the spec's experiment is configured: one place for what runs and what is estimated.
sim::AveragingRunConfig averaging_config(const SweepSpec& spec, const scenarios::Scenario& sc) {
  sim::AveragingRunConfig cfg;
  cfg.strategy = sc.averaging.strategy;
  cfg.rounds = spec.experiment.rounds.value_or(sc.averaging.rounds);
  cfg.backend = spec.experiment.backend;
  cfg.coordination = sc.training.coordination;
  cfg.replay_rounds = spec.experiment.replay_rounds;
  return cfg;
}

sim::TrainingRunConfig training_config(const SweepSpec& spec) {
  sim::TrainingRunConfig cfg;
  cfg.backend = spec.experiment.backend;
  cfg.replay_rounds = spec.experiment.replay_rounds;
  cfg.duration_s = spec.experiment.duration_s;
  return cfg;
}

Metrics averaging_metrics(const SweepSpec& spec, const scenarios::Scenario& sc) {
  const sim::AveragingRunResult r = sim::run_averaging(sc, averaging_config(spec, sc));
  double max_round = 0, min_fraction = 1;
  std::uint64_t failures = 0, incomplete = 0, bytes = 0;
  for (const auto& round : r.rounds) {
    max_round = std::max(max_round, round.duration_s);
    min_fraction = std::min(min_fraction, round.min_fraction_averaged);
    failures += round.failures;
    incomplete += round.incomplete;
  }
  for (auto b : r.bytes_sent) bytes += b;
  const double rounds = static_cast<double>(r.rounds.size());
  return {{"mean_round_s", finite(r.mean_round_s)},
          {"max_round_s", finite(max_round)},
          {"rounds", rounds},
          {"failures", static_cast<double>(failures)},
          {"incomplete", static_cast<double>(incomplete)},
          {"fraction_averaged_min", finite(min_fraction)},
          {"gb_sent_per_round", rounds > 0 ? finite(static_cast<double>(bytes) / rounds / 1e9) : std::nullopt},
          {"events", static_cast<double>(r.events)}};
}

Metrics training_metrics(const SweepSpec& spec, const scenarios::Scenario& sc) {
  const sim::TrainingRunResult r = sim::run_training(sc, training_config(spec));
  return {{"steps_per_hour", finite(r.steps_per_hour)},
          {"steps", static_cast<double>(r.steps)},
          {"mean_round_s", finite(r.mean_round_s)},
          {"mean_utilisation", finite(r.mean_utilisation)},
          {"state_downloads", static_cast<double>(r.state_downloads)},
          {"samples_lost", static_cast<double>(r.ledger.lost)},
          {"max_left_out_share", finite(r.max_left_out_share)},
          {"traffic_gb_per_hour", finite(r.mean_traffic_gb_per_hour)},
          {"events", static_cast<double>(r.events)}};
}

// The bound on what the run costs (not the expectation that orders runs).
sim::RunCost run_cost(const SweepSpec& spec, const scenarios::Scenario& sc) {
  if (spec.experiment.run == Experiment::Training) {
    const sim::TrainingRunConfig cfg = training_config(spec);
    return sim::training_cost(sc, cfg.duration_s.value_or(sc.training.duration_s), cfg.dpu.value_or(sc.training.dpu),
                              cfg.transport);
  }
  const sim::AveragingRunConfig cfg = averaging_config(spec, sc);
  return sim::averaging_cost(sc, cfg.strategy, cfg.rounds, cfg.replay_rounds, cfg.carry_values, /*traced=*/false);
}

RunResult skeleton(const SweepSpec& spec, const RunDesc& run) {
  RunResult r;
  r.index = run.index;
  r.composition = run.composition;
  r.seed = run.seed;
  r.values = run.values;
  r.key = run_key(spec, run);
  return r;
}

}  // namespace

double expected_events(const SweepSpec& spec, const RunDesc& run) {
  try {
    const scenarios::Scenario sc = materialize(spec, run).scenario;
    if (spec.experiment.run == Experiment::Training) {
      const sim::TrainingRunConfig cfg = training_config(spec);
      return sim::expected_training_events(sc, cfg.duration_s.value_or(sc.training.duration_s),
                                           cfg.dpu.value_or(sc.training.dpu), cfg.transport);
    }
    return run_cost(spec, sc).events;
  } catch (const std::exception&) {
    return 0;
  }
}

RunResult failed_result(const SweepSpec& spec, const RunDesc& run, Status status, std::string error) {
  RunResult r = skeleton(spec, run);
  r.status = status;
  r.error = std::move(error);
  return r;
}

RunResult execute_run(const SweepSpec& spec, const RunDesc& run, const sim::RunBudget& budget) {
  RunResult r;
  try {
    r = skeleton(spec, run);
    const Materialized m = materialize(spec, run);
    const auto& peers = m.scenario.peers;
    r.peers = peers.size();
    r.client_peers = static_cast<std::size_t>(std::count_if(peers.begin(), peers.end(), [](const auto& p) {
      return p.reachability == scenarios::Reachability::Client;
    }));
    sim::check_budget(run_cost(spec, m.scenario), budget, m.scenario.source,
                      "run " + std::to_string(run.index) + " (the scenario the sweep builds for it)");
    r.metrics = spec.experiment.run == Experiment::Training ? training_metrics(spec, m.scenario)
                                                            : averaging_metrics(spec, m.scenario);
  } catch (const std::exception& e) {
    r.status = Status::Error;
    r.error = e.what();
    r.metrics.clear();
  }
  return r;
}

std::string to_json_text(const SweepSpec& spec, const RunResult& r) {
  nlohmann::ordered_json j;
  j["run"] = r.index;
  j["composition"] = r.composition;
  j["seed"] = r.seed;
  j["key"] = r.key;
  nlohmann::ordered_json axes = nlohmann::ordered_json::object();
  for (std::size_t k = 0; k < spec.axes.size(); ++k) axes[spec.axes[k].name] = r.values[k];
  j["axes"] = axes;
  j["peers"] = r.peers ? nlohmann::ordered_json(*r.peers) : nlohmann::ordered_json(nullptr);
  j["client_peers"] = r.client_peers ? nlohmann::ordered_json(*r.client_peers) : nlohmann::ordered_json(nullptr);
  j["status"] = std::string(core::name_of(kStatusNames, r.status));
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& [name, v] : r.metrics) metrics[name] = v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
  j["metrics"] = metrics;
  j["error"] = r.error;
  // Error text may hold any bytes from an input file: replace invalid UTF-8 rather than fail.
  return j.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

RunResult result_from_json(const SweepSpec& spec, const std::string& text) {
  const json j = json::parse(text);  // throws on malformed text
  RunResult r;
  r.index = j.at("run").get<std::size_t>();
  r.composition = j.at("composition").get<std::size_t>();
  r.seed = j.at("seed").get<std::uint64_t>();
  r.key = j.at("key").get<std::string>();
  for (const auto& a : spec.axes) r.values.push_back(j.at("axes").at(a.name));
  if (!j.at("peers").is_null()) r.peers = j["peers"].get<std::size_t>();
  if (!j.at("client_peers").is_null()) r.client_peers = j["client_peers"].get<std::size_t>();
  const auto status = core::parse_name(kStatusNames, j.at("status").get<std::string>());
  if (!status) throw std::runtime_error("unknown status");
  r.status = *status;
  r.error = j.at("error").get<std::string>();
  if (r.status == Status::Ok)
    for (const auto& m : metrics_of(spec.experiment.run)) {
      const json& v = j.at("metrics").at(std::string(m.name));
      r.metrics.emplace_back(std::string(m.name), v.is_null() ? std::nullopt : std::optional<double>(v.get<double>()));
    }
  return r;
}

}  // namespace swarmlab::sweep
