#pragma once
// `swarmlab validate`: the same scenario simulated (flow backend) and run live, per strategy, so
// the simulator's averaging time can be checked against a measurement. Both sides see the same
// network: the live view of the scenario (exec/live_scenario.h: rates × scale, latency only where
// the emulated links really add it) and this transport's goodput instead of the simulator's
// default, which describes the paper's stack (exec/README.md explains the choice).
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/averaging/strategy.h"
#include "core/codec/codec.h"
#include "exec/launcher.h"

namespace swarmlab::exec {

struct ValidateOptions {
  std::string scenario_path;
  std::vector<core::averaging::Strategy> strategies = {core::averaging::Strategy::AllReduce,
                                                       core::averaging::Strategy::ParameterServer,
                                                       core::averaging::Strategy::Planned};
  bool emulate_links = false;
  bool nat_clients = false;  // client-mode peers behind NAT in the live runs (LaunchOptions)
  double scale = 1;
  double goodput = -1;  // < 0: kLiveGoodputFraction
  // Measure this transport's goodput over one emulated link first (exec/goodput_probe.h, at the
  // scenario's median scaled upload rate) and use it instead of the constant. Needs emulation.
  bool calibrate = false;
  std::uint64_t rounds = 3;  // live rounds per strategy; the first is a warm-up (LaunchResult::mean_round_s)
  std::optional<std::uint64_t> parameters;
  std::optional<core::codec::Codec> precision;
  std::string out_dir;       // default: out/<scenario>-validate
  std::string executable;    // default: this executable
  double deadline_s = 900;   // per live run
  std::string congestion_control = "cubic";  // TCP_CONGESTION of the live runs (LaunchOptions)
  std::function<void(const std::string&)> progress;
};

struct ValidateRow {
  std::string strategy;
  double predicted_s = 0;
  double measured_s = 0;
  bool live_ok = false;     // the live run completed every round with correct values
  std::size_t rounds = 0;   // live rounds measured
  double ratio() const { return predicted_s > 0 ? measured_s / predicted_s : 0; }
};

struct ValidateResult {
  std::string scenario;
  double scale = 1, goodput = 0;
  double measured_goodput = 0;  // calibrate: the probe's result
  bool emulated_links = false, latency_emulated = false, interrupted = false;
  std::uint64_t parameters = 0;
  std::string codec;
  std::vector<ValidateRow> rows;
};

ValidateResult validate(const ValidateOptions& options);
// {"rows": [{"strategy", "predicted_s", "measured_s", "ratio", "live_ok", "rounds"}, ...], "scale", ...}
std::string validate_json(const ValidateResult& result);

}  // namespace swarmlab::exec
