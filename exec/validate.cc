#include "exec/validate.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "exec/goodput_probe.h"
#include "exec/live_scenario.h"
#include "scenarios/scenario_loader.h"
#include "sim/experiments/averaging_experiment.h"

namespace swarmlab::exec {

ValidateResult validate(const ValidateOptions& o) {
  const scenarios::Scenario sc = scenarios::load_scenario(o.scenario_path);
  ValidateResult result;
  result.scenario = sc.name;
  result.scale = o.scale;
  result.goodput = o.goodput > 0 ? o.goodput : kLiveGoodputFraction;
  result.emulated_links = o.emulate_links;
  if (o.calibrate) {
    if (!o.emulate_links) throw std::invalid_argument("--calibrate measures an emulated link: it needs --emulate-links");
    std::vector<double> rates;
    for (const auto& p : sc.peers) rates.push_back(p.upload_bps * o.scale);
    std::nth_element(rates.begin(), rates.begin() + static_cast<std::ptrdiff_t>(rates.size() / 2), rates.end());
    const double rate = rates[rates.size() / 2];
    if (o.progress) o.progress("calibrating: this transport's goodput over one emulated link at " + std::to_string(rate / 1e6) + " Mb/s");
    // The all-to-all pattern of a round with up to 8 peers: n - 1 connections share every link.
    const std::size_t peers = std::clamp<std::size_t>(sc.peers.size(), 2, 8);
    const GoodputProbe probe = probe_goodput(rate, std::max<std::uint64_t>((2u << 20) * (peers - 1), static_cast<std::uint64_t>(rate / 8 * 4)), peers,
                                             o.congestion_control);
    result.measured_goodput = probe.goodput();
    result.goodput = probe.goodput();
  }
  const std::string out = o.out_dir.empty() ? "out/" + sc.name + "-validate" : o.out_dir;
  for (const auto strategy : o.strategies) {
    const std::string name(core::averaging::label(strategy));
    LaunchOptions lo;
    lo.scenario_path = o.scenario_path;
    lo.strategy = strategy;
    lo.rounds = o.rounds;
    lo.parameters = o.parameters;
    lo.precision = o.precision;
    lo.emulate_links = o.emulate_links;
    lo.nat_clients = o.nat_clients;
    lo.scale = o.scale;
    lo.goodput = result.goodput;
    lo.out_dir = out + "/" + name;
    lo.executable = o.executable;
    lo.deadline_s = o.deadline_s;
    lo.progress = o.progress;
    lo.congestion_control = o.congestion_control;
    if (o.progress) o.progress(name + ": live run");
    const LaunchResult live = launch(lo);
    result.latency_emulated = live.latency_emulated;
    result.parameters = live.parameters;
    result.codec = live.codec;
    if (live.interrupted) {
      result.interrupted = true;
      break;
    }
    // The simulated twin of the network the live run had.
    LiveOverrides ov;
    ov.scale = o.scale;
    ov.parameters = o.parameters;
    ov.precision = o.precision;
    ov.zero_latency = !live.latency_emulated;
    const scenarios::Scenario view = live_view(sc, ov);
    sim::AveragingRunConfig cfg;
    cfg.strategy = strategy;
    cfg.rounds = 1;  // rounds of a static collaboration are identical in simulation
    cfg.backend = "flow";
    cfg.transport.goodput_fraction = result.goodput;
    if (o.progress) o.progress(name + ": simulation");
    const sim::AveragingRunResult predicted = sim::run_averaging(view, cfg);

    ValidateRow row;
    row.strategy = name;
    row.predicted_s = predicted.mean_round_s;
    row.measured_s = live.mean_round_s();
    row.live_ok = live.ok;
    row.rounds = live.rounds.size() > 1 ? live.rounds.size() - 1 : live.rounds.size();
    result.rows.push_back(row);
  }
  return result;
}

std::string validate_json(const ValidateResult& r) {
  nlohmann::ordered_json j;
  j["scenario"] = r.scenario;
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : r.rows)
    j["rows"].push_back({{"strategy", row.strategy},
                         {"predicted_s", row.predicted_s},
                         {"measured_s", row.measured_s},
                         {"ratio", row.ratio()},
                         {"live_ok", row.live_ok},
                         {"rounds", row.rounds}});
  j["scale"] = r.scale;
  j["goodput"] = r.goodput;
  if (r.measured_goodput > 0) j["measured_goodput"] = r.measured_goodput;
  j["emulated_links"] = r.emulated_links;
  j["latency_emulated"] = r.latency_emulated;
  j["parameters"] = r.parameters;
  j["codec"] = r.codec;
  j["interrupted"] = r.interrupted;
  return j.dump(2);
}

}  // namespace swarmlab::exec
