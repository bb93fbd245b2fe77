#pragma once
// The DHT scale experiment: N simulated peers running core::dht::DhtNode over the latency network
// join, settle, then store and look up keys while churn replaces peers.
//
// Timeline:
//   t = 0                the backbone peers (always up, never churned) start and bootstrap from
//                        each other;
//   [0, join window]     every other peer joins at a uniformly random time, bootstrapping from
//                        the backbone peers;
//   + settle             nothing but DHT maintenance;
//   [measure, +hours]    the workload and churn run, and everything reported is measured.
//
// Workload (all Poisson processes, the acting peer drawn uniformly among live joined peers):
// - puts: each peer creates new keys at puts_per_peer_per_hour. The owner stores the key with
//   expiration now + value_ttl_s and re-stores it every republish_period_s with a fresh expiration
//   (hivemind servers re-declare their keys every update_period with expiration 2 × update_period;
//   the defaults use 10 min / 20 min), for key_lifetime_s, after which it lets the key expire.
// - gets: each peer looks up keys at gets_per_peer_per_hour, each a key drawn uniformly among the
//   live keys: the owner is alive, its first store succeeded and its last successful store has not
//   expired. A get succeeds when it returns the key's value. A get whose key stopped being live
//   before the answer came (owner left, or expired meanwhile) counts neither way.
// - churn: churn_per_hour · N times per hour (Poisson), a random non-backbone peer goes down for
//   good and a fresh peer with a new id (and a new transport address) joins through the backbone.
//
// Peer links: one-way access latency log-uniform in [min_latency_s, max_latency_s] (default
// 10–100 ms, so path latencies of 20–200 ms), bandwidth log-uniform in [min_bandwidth_bps,
// max_bandwidth_bps] for download with upload a quarter of it, all drawn from the run's seed.
#include <cstdint>
#include <vector>

#include "core/dht/config.h"
#include "core/env.h"

namespace swarmlab::sim {

struct DhtExperimentConfig {
  std::uint32_t peers = 1000;
  double churn_per_hour = 0;  // fraction of the peers replaced per simulated hour
  double hours = 1;           // length of the measured phase
  std::uint64_t seed = 1;

  std::uint32_t backbone_peers = 3;
  core::Seconds join_window_s = -1;  // < 0: max(60 s, 0.05 s per peer)
  core::Seconds settle_s = 120;

  double puts_per_peer_per_hour = 1;
  double gets_per_peer_per_hour = 6;
  core::Seconds value_ttl_s = 1200;
  core::Seconds republish_period_s = 600;
  core::Seconds key_lifetime_s = 3600;
  std::size_t value_bytes = 64;

  core::Seconds min_latency_s = 0.010, max_latency_s = 0.100;
  double min_bandwidth_bps = 10e6, max_bandwidth_bps = 100e6;

  core::dht::DhtConfig dht;
};

struct DhtExperimentResult {
  std::uint32_t peers = 0;
  int id_bits = 0;              // the DHT's id width (160 hivemind, 256 Hydra)
  std::size_t bucket_size = 0;  // k (Hydra's M)
  double churn_per_hour = 0, hours = 0;
  std::uint64_t seed = 0;

  std::uint64_t gets = 0, gets_ok = 0;  // gets of live keys that completed, and succeeded
  std::uint64_t gets_lost = 0;          // issued but never completed (the getter left)
  std::uint64_t gets_key_died = 0;      // completed after the key stopped being live: not counted
  std::uint64_t puts = 0, puts_ok = 0;
  std::uint64_t republishes = 0, republishes_ok = 0;
  double get_success_rate = 0;
  double store_success_rate = 0;  // puts and republishes

  // Hops and latency of successful gets (0 hops: the getter held a replica itself).
  std::vector<std::uint64_t> hops_histogram;
  double hops_median = 0, hops_p99 = 0, hops_mean = 0;
  double hop_bound = 0;  // ceil(log2 N / log2 k) + 2
  double latency_median_s = 0, latency_p99_s = 0, latency_mean_s = 0;

  // DHT traffic during the measured phase, sent, per live peer per minute (framing included).
  double messages_per_peer_minute = 0, bytes_per_peer_minute = 0;
  // Where the requests come from: lookups started (workload, joins, bucket refreshes), their
  // FIND_NODE/FIND_VALUE requests, STORE requests, and pings of full buckets' oldest entries.
  double lookups_per_peer_minute = 0, find_requests_per_peer_minute = 0;
  double store_requests_per_peer_minute = 0, liveness_pings_per_peer_minute = 0;
  std::uint64_t messages_dropped = 0;  // malformed, skewed or unexpected (expected: late replies)

  // Routing tables of the live peers at the end: fraction of entries that point at a live node,
  // mean entries, mean non-empty buckets.
  double routing_alive_fraction = 0, routing_mean_entries = 0, routing_mean_buckets = 0;

  std::uint64_t joins = 0, departures = 0;
  std::uint64_t live_keys_at_end = 0;
  std::uint64_t events = 0;
  double simulated_s = 0;
  double wall_s = 0;           // whole run; not deterministic, excluded from comparisons
  double wall_measured_s = 0;  // the measured phase alone (also not deterministic)
};

DhtExperimentResult run_dht_experiment(const DhtExperimentConfig& config);

}  // namespace swarmlab::sim
