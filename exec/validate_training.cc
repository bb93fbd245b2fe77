#include "exec/validate_training.h"

#include <nlohmann/json.hpp>

#include <numeric>
#include <stdexcept>

#include "exec/link_emulator.h"
#include "exec/live_scenario.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/training_experiment.h"

namespace swarmlab::exec {

TrainingValidateResult validate_training(const TrainingValidateOptions& o) {
  if (const std::string why = LinkEmulator::unavailable_reason(); !why.empty())
    throw std::invalid_argument("validate --train compares against emulated links: " + why);
  const scenarios::Scenario sc = scenarios::load_scenario(o.scenario_path);
  TrainingValidateResult result;
  result.scenario = sc.name;
  result.scale = o.scale;
  result.goodput = o.goodput > 0 ? o.goodput : kLiveGoodputFraction;

  LaunchOptions lo;
  lo.scenario_path = o.scenario_path;
  lo.precision = o.precision;
  lo.emulate_links = true;
  lo.scale = o.scale;
  lo.goodput = result.goodput;
  lo.train = o.train;
  lo.out_dir = o.out_dir.empty() ? "out/" + sc.name + "-validate-train" : o.out_dir;
  lo.executable = o.executable;
  lo.deadline_s = o.deadline_s;
  lo.progress = o.progress;
  lo.congestion_control = o.congestion_control;
  if (o.progress) o.progress("live training run");
  const LaunchResult live = launch(lo);
  result.interrupted = live.interrupted;
  result.live_ok = live.ok;
  result.latency_emulated = live.latency_emulated;
  if (live.interrupted) return result;
  const TrainingSummary& t = *live.training;
  if (t.steps.size() < 3) throw std::runtime_error("validate --train: the live run took fewer than 3 steps; see " + lo.out_dir);
  result.parameters = t.parameters;
  result.live_steps = t.last_step;
  result.duration_s = t.last_step_s;

  // The simulated twin: the network the live run had, the compute its peers measured.
  LiveOverrides ov;
  ov.scale = o.scale;
  ov.parameters = t.parameters;
  ov.precision = o.precision;
  ov.zero_latency = !live.latency_emulated;
  scenarios::Scenario view = live_view(sc, ov);
  for (std::size_t i = 0; i < view.peers.size(); ++i) {
    const double sps = i < t.peers.size() ? t.peers[i].measured_sps : 0;
    if (sps > 0) view.peers[i].compute_sps = sps;
    result.measured_sps.push_back(view.peers[i].compute_sps);
  }
  if (o.train.target_batch) view.workload.target_batch = o.train.target_batch;
  if (o.train.micro_batch) view.training.micro_batch = o.train.micro_batch;
  sim::TrainingRunConfig cfg;
  cfg.transport.goodput_fraction = result.goodput;
  cfg.coordination = scenarios::Coordination::Dht;
  cfg.duration_s = t.last_step_s;
  // Every round simulated: with DHT coordination the members of a group may begin their round at
  // different moments, and a replayed round counts from the last of them (docs/interpretations.md
  // §23). The twin is short.
  cfg.replay_rounds = false;
  if (!o.train.dpu.empty()) cfg.dpu = o.train.dpu == "on";
  if (o.progress) o.progress("simulation of the same collaboration (flow network, DHT coordination)");
  const sim::TrainingRunResult predicted = sim::run_training(view, cfg);
  result.simulated_steps = predicted.steps;
  if (predicted.step_times.size() < 3) throw std::runtime_error("validate --train: the simulation took fewer than 3 steps");

  const auto& times = predicted.step_times;
  const double predicted_rate = static_cast<double>(times.size() - 1) / (times.back() - times.front()) * 3600.0;
  // Averaging time per step: live, the longest member's round (the first step is a warm-up).
  double round_sum = 0, samples_sum = 0;
  for (std::size_t k = 1; k < t.steps.size(); ++k) {
    round_sum += t.steps[k].round_s;
    samples_sum += static_cast<double>(t.steps[k].samples);
  }
  const double live_steps = static_cast<double>(t.steps.size() - 1);
  result.metrics.push_back({"steps_per_hour", predicted_rate, t.steps_per_hour()});
  result.metrics.push_back({"round_s", predicted.mean_round_s, round_sum / live_steps});
  result.metrics.push_back({"samples_per_step", static_cast<double>(predicted.ledger.in_steps) / static_cast<double>(predicted.steps),
                            samples_sum / live_steps});
  return result;
}

std::string training_validate_json(const TrainingValidateResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["metrics"] = nlohmann::ordered_json::array();
  for (const auto& m : r.metrics)
    j["metrics"].push_back({{"metric", m.name}, {"predicted", m.predicted}, {"measured", m.measured}, {"ratio", m.ratio()}});
  j["scale"] = r.scale;
  j["goodput"] = r.goodput;
  j["latency_emulated"] = r.latency_emulated;
  j["parameters"] = r.parameters;
  j["duration_s"] = r.duration_s;
  j["live_steps"] = r.live_steps;
  j["simulated_steps"] = r.simulated_steps;
  j["measured_sps"] = r.measured_sps;
  j["live_ok"] = r.live_ok;
  j["interrupted"] = r.interrupted;
  return j.dump(2);
}

}  // namespace swarmlab::exec
