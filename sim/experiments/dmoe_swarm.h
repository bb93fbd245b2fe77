#pragma once
// Learning@home at internet scale (docs/learning-at-home.md §8): thousands of expert runtimes and a
// population of trainers on the DHT, with churn, 20–250 ms paths, 10–100 Mb/s links and packet
// loss. Every part is the core's: runtimes run core::dmoe::ExpertRuntime with sizes-only experts,
// announce through ExpertAnnouncer, checkpoint and take over through ExpertKeeper; trainers choose
// experts with beam_search and call them with mixture_forward/mixture_backward.
//
// Timeline: backbone runtimes start at t = 0; every other runtime and every trainer joins at a
// uniformly random time in the join window, bootstrapping from the backbone, and starts announcing
// (runtimes) as soon as it has joined; trainers start training after the settle time; the measured
// phase is the `hours` after that.
//
// Trainers: each keeps one batch in flight through `layers` DMoE layers. Per layer it draws gate
// scores (standard normal, one vector of M per grid dimension), beam-searches the layer's grid for
// k experts and sends them the batch; the backward pass goes back through the layers with the
// experts that answered. A batch is dropped when a layer finds no expert or none of its experts
// answers (forward or backward).
// Runtimes: runtime r hosts experts_per_runtime neighbouring experts of layer r mod layers (one
// block along the last grid dimension, drawn from the seed), and watches the experts of runtime r + layers (the next runtime of its layer):
// that is who takes them over when their runtime fails.
// Churn: churn_per_hour · runtimes times per hour (Poisson), a random live non-backbone runtime
// fails for good; silent_share of the failures are silent (power loss), the rest crashes.
#include <cstdint>
#include <vector>

#include "core/dht/config.h"
#include "core/dmoe/expert_announcer.h"
#include "core/dmoe/expert_client.h"
#include "core/dmoe/expert_keeper.h"
#include "core/env.h"

namespace swarmlab::sim {

struct DmoeSwarmConfig {
  std::uint32_t runtimes = 10000;
  std::uint32_t trainers = 100;
  std::uint32_t backbone = 3;  // runtimes that never fail; everyone bootstraps from them
  std::uint32_t layers = 2;
  std::uint32_t grid_dims = 2, grid_side = 128;
  std::uint32_t experts_per_runtime = 2;
  std::uint32_t k = 4;
  std::uint32_t batch_rows = 64, width = 1024;

  double hours = 1;
  double churn_per_hour = 0.01;  // fraction of the runtimes that fail per simulated hour
  double silent_share = 0.5;
  core::Seconds join_window_s = -1;  // < 0: max(60 s, 0.05 s per peer)
  core::Seconds settle_s = 300;
  std::uint64_t seed = 1;

  // Links: one-way access latency uniform in [10, 125] ms (paths of 20–250 ms), download
  // log-uniform in 10–100 Mb/s with upload a quarter of it, and loss on every packet.
  core::Seconds min_latency_s = 0.010, max_latency_s = 0.125;
  double min_bandwidth_bps = 10e6, max_bandwidth_bps = 100e6;
  double packet_loss = 0.0033;
  // Runtime GPUs: 0.2–0.8 of a V100 (14 TFLOP/s), experts 1024 -> 4096 -> 1024.
  double gpu_flops = 14e12, min_gpu_share = 0.2, max_gpu_share = 0.8;
  double expert_forward_flops_per_row = 2.0 * (1024 * 4096 + 4096 * 1024);

  // t = 20 min, announced every 10 min; watched experts checked every 10 min (docs/learning-at-home.md
  // §8 discusses the choice).
  core::dmoe::AnnounceConfig announce{1200, 600};
  core::dmoe::KeeperConfig keeper{1800, 7200, 600, 2, 3};
  core::dmoe::ClientConfig client{10, 20};
  core::dht::DhtConfig dht;
};

struct DmoeSwarmResult {
  DmoeSwarmConfig config;
  // Training, over the measured phase.
  std::uint64_t batches = 0;  // completed forward and backward
  std::uint64_t dropped = 0, dropped_no_experts = 0, dropped_forward = 0, dropped_backward = 0;
  double samples_per_s = 0;
  double mean_batch_s = 0;  // a completed batch's time, first lookup to last answer
  // Beam search.
  std::uint64_t searches = 0, searches_found_k = 0;
  double found_k_share = 0;
  double mean_lookups = 0;
  std::uint64_t max_lookups = 0;
  double lookup_bound = 0;   // d · k · M
  double mean_search_s = 0;
  // Expert calls.
  std::uint64_t expert_calls = 0, expert_failures = 0, expert_timeouts = 0, expert_refusals = 0, expert_link_failures = 0;
  // DHT traffic over the measured phase, sent, per live peer per minute (framing included).
  double dht_messages_per_peer_minute = 0, dht_bytes_per_peer_minute = 0;
  std::uint64_t announcement_stores = 0;
  // Churn and takeover.
  std::uint64_t failures = 0, taken_over = 0, restarted_fresh = 0;
  std::uint64_t events = 0;
  double simulated_s = 0;
  double wall_s = 0, wall_measured_s = 0;  // not deterministic
};

DmoeSwarmResult run_dmoe_swarm(const DmoeSwarmConfig& config);

}  // namespace swarmlab::sim
