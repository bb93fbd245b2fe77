#pragma once
// A live Learning@home run (docs/learning-at-home.md §10): how many expert runtimes and trainers,
// the DMoE model, how the trainers train, and the experts' announcement and takeover timing. One
// JSON file, {"dmoe": {...}}, read by `swarmlab launch` (which starts both kinds of process) and by
// every `dmoe-runtime` and `dmoe-trainer` process it starts. Errors name the file, the JSON path
// and what was expected (core::InputError, exit 2).
#include <cstdint>
#include <string>

#include "core/dmoe/expert_grid.h"

namespace swarmlab::scenarios {

struct DmoeLiveScenario {
  std::string name;
  std::string description;
  std::uint64_t seed = 1;
  // Peers 0 .. runtimes-1. Runtime r serves layer r mod layers (a request names an expert by its
  // coordinates alone, so one runtime serves one layer, as in the simulator's swarm): at least one
  // runtime per layer, two or more for takeover.
  std::uint32_t runtimes = 8;
  std::uint32_t trainers = 4;  // peers runtimes .. runtimes+trainers-1; the first one evaluates
  // The model: a stem 784 → width, `layers` residual DMoE layers, a head width → 10 classes.
  std::uint32_t width = 32;
  std::uint32_t hidden = 64;  // an expert's inner width
  std::uint32_t layers = 4;
  std::uint32_t dims = 2, side = 4;  // each layer's grid (side^dims experts)
  std::uint32_t k = 4;               // experts per batch and layer
  // The dense baseline of equal compute: per layer one expert of inner width k·hidden on a 1 × 1
  // grid, chosen with k = 1 (what the k experts of a DMoE layer compute together).
  bool dense = false;
  // Training: every trainer runs asynchronously for duration_s.
  std::uint32_t batch = 64;
  double lr = 1e-3;         // Adam on the trainers' stem, gates and head
  double expert_lr = 1e-3;  // Adam on each expert
  double duration_s = 60;
  double delay_s = 0;        // mean of the exponential pause after every expert call (network delay)
  std::uint32_t in_flight = 1;  // batches each trainer keeps in flight
  std::uint32_t eval_every = 50;     // the first trainer's test accuracy every this many of its batches (0: never)
  std::uint32_t eval_samples = 1000;  // on the first this many test images (the whole set at the end)
  // Expert calls and the experts' life cycle (core/dmoe: expert_client.h, expert_announcer.h, expert_keeper.h).
  double forward_timeout_s = 2, backward_timeout_s = 4;
  double alive_for_s = 4, announce_period_s = 1.5;
  double checkpoint_period_s = 3, watch_period_s = 1;
  std::uint32_t lapsed_checks = 2;

  std::uint32_t peers() const { return runtimes + trainers; }
  // Layer l's grid, and the uids of its experts in row-major order.
  core::dmoe::ExpertGrid grid(std::uint32_t layer) const;
  std::uint32_t expert_hidden() const { return dense ? k * hidden : hidden; }
  std::uint32_t experts_per_call() const { return dense ? 1 : k; }
  std::uint32_t layer_of(std::uint32_t runtime) const { return runtime % layers; }
  // The experts runtime r hosts at the start: of its layer's experts in grid order, those whose
  // index ≡ r's rank among the layer's runtimes (mod their number).
  std::vector<core::dmoe::ExpertUid> hosted_by(std::uint32_t runtime) const;
  // The runtime whose experts r takes over when they disappear: the next one of r's layer (r
  // itself when it is the layer's only runtime).
  std::uint32_t watched_by(std::uint32_t runtime) const;
};

// Reads {"dmoe": {...}}; `source` names the input in errors.
DmoeLiveScenario load_dmoe_live(const std::string& json_text, const std::string& source);
DmoeLiveScenario load_dmoe_live_file(const std::string& path);
// The scenario as JSON that load_dmoe_live reads back to the same values (the launcher hands its
// effective scenario, overrides included, to every process).
std::string dmoe_live_json(const DmoeLiveScenario& scenario);
// Whether a scenario file's top level is a live DMoE run (has a "dmoe" field); false for text
// that is not a JSON object.
bool is_dmoe_live(const std::string& json_text);

}  // namespace swarmlab::scenarios
