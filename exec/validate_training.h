#pragma once
// `swarmlab validate <scenario> --train`: a live training run (exec/train/training_peer.h) and its
// simulated twin, compared on what the protocol and the network decide: global steps per hour,
// averaging time per step and samples per step. The simulator runs the same CollaborativePeer
// with DHT coordination over the flow network of the live view of the scenario (rates x scale,
// this transport's goodput, latency only where the emulated links add it), and every peer computes
// at the speed it measured and announced live - so compute is given, and what is compared is the
// protocol and the network. The live run must be behind emulated links: on plain loopback the
// scenario's links only inform the planner and there is nothing to predict.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/codec/codec.h"
#include "exec/launcher.h"

namespace swarmlab::exec {

struct TrainingValidateOptions {
  std::string scenario_path;
  TrainLaunch train;
  double scale = 1;
  double goodput = -1;  // < 0: kLiveGoodputFraction
  std::optional<core::codec::Codec> precision;
  std::string out_dir;       // default: out/<scenario>-validate-train
  std::string executable;    // default: this executable
  double deadline_s = 900;
  std::string congestion_control = "cubic";
  std::function<void(const std::string&)> progress;
};

struct TrainingValidateMetric {
  std::string name;
  double predicted = 0, measured = 0;
  double ratio() const { return predicted > 0 ? measured / predicted : 0; }
};

struct TrainingValidateResult {
  std::string scenario;
  double scale = 1, goodput = 0;
  bool latency_emulated = false, live_ok = false, interrupted = false;
  std::uint64_t parameters = 0;
  std::uint64_t live_steps = 0, simulated_steps = 0;
  double duration_s = 0;               // the live run's, which the simulation reproduces
  std::vector<double> measured_sps;    // per peer, what the simulation computes at
  std::vector<TrainingValidateMetric> metrics;  // steps_per_hour, round_s, samples_per_step
};

// Throws std::invalid_argument when links cannot be emulated here (the reason) or the live run
// took fewer than three steps (nothing to compare).
TrainingValidateResult validate_training(const TrainingValidateOptions& options);
std::string training_validate_json(const TrainingValidateResult& result);

}  // namespace swarmlab::exec
