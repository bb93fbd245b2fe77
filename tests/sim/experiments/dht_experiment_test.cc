#include "sim/experiments/dht_experiment.h"

#include <gtest/gtest.h>

#include <cmath>

namespace swarmlab::sim {
namespace {

double total(const std::vector<std::uint64_t>& histogram) {
  double n = 0;
  for (auto c : histogram) n += static_cast<double>(c);
  return n;
}

// The acceptance run: 1,000 peers, no churn, lookups after the network settled. Every get of a
// live key succeeds and the median hop count stays within ceil(log2 N / log2 k) + 2 = 5.
TEST(DhtExperiment, ThousandPeersWithoutChurnFindEveryLiveKey) {
  DhtExperimentConfig c;
  c.peers = 1000;
  c.hours = 0.25;
  c.seed = 1;
  const DhtExperimentResult r = run_dht_experiment(c);
  EXPECT_GT(r.gets, 1000u);
  EXPECT_EQ(r.gets_ok, r.gets);
  EXPECT_DOUBLE_EQ(r.get_success_rate, 1.0);
  EXPECT_EQ(r.gets_lost, 0u);
  EXPECT_DOUBLE_EQ(r.store_success_rate, 1.0);
  EXPECT_DOUBLE_EQ(r.hop_bound, 5);
  EXPECT_LE(r.hops_median, r.hop_bound);
  EXPECT_EQ(total(r.hops_histogram), static_cast<double>(r.gets_ok));
  EXPECT_GT(r.latency_median_s, 0.02);  // at least one round trip of the latency model
  EXPECT_LE(r.latency_median_s, r.latency_p99_s);
  EXPECT_DOUBLE_EQ(r.routing_alive_fraction, 1.0);
  EXPECT_GT(r.routing_mean_entries, 20);
  EXPECT_GT(r.messages_per_peer_minute, 0);
  EXPECT_EQ(r.departures, 0u);
}

TEST(DhtExperiment, SurvivesChurn) {
  DhtExperimentConfig c;
  c.peers = 300;
  c.churn_per_hour = 0.5;  // heavy: half the peers replaced per hour
  c.hours = 0.25;
  c.seed = 3;
  const DhtExperimentResult r = run_dht_experiment(c);
  EXPECT_GT(r.departures, 20u);
  EXPECT_EQ(r.joins, 300u + r.departures);
  EXPECT_GT(r.gets, 200u);
  EXPECT_GE(r.get_success_rate, 0.99);
  EXPECT_LT(r.routing_alive_fraction, 1.0);  // some entries still point at departed peers
  EXPECT_GT(r.routing_alive_fraction, 0.9);
}

TEST(DhtExperiment, SameSeedSameResult) {
  DhtExperimentConfig c;
  c.peers = 150;
  c.churn_per_hour = 0.3;
  c.hours = 0.2;
  c.seed = 11;
  DhtExperimentResult a = run_dht_experiment(c);
  DhtExperimentResult b = run_dht_experiment(c);
  a.wall_s = b.wall_s = 0;
  EXPECT_EQ(a.gets, b.gets);
  EXPECT_EQ(a.gets_ok, b.gets_ok);
  EXPECT_EQ(a.hops_histogram, b.hops_histogram);
  EXPECT_EQ(a.latency_median_s, b.latency_median_s);
  EXPECT_EQ(a.latency_p99_s, b.latency_p99_s);
  EXPECT_EQ(a.messages_per_peer_minute, b.messages_per_peer_minute);
  EXPECT_EQ(a.bytes_per_peer_minute, b.bytes_per_peer_minute);
  EXPECT_EQ(a.routing_alive_fraction, b.routing_alive_fraction);
  EXPECT_EQ(a.events, b.events);
  c.seed = 12;
  const DhtExperimentResult other = run_dht_experiment(c);
  EXPECT_NE(other.events, a.events);
}

TEST(DhtExperiment, RejectsBadConfigurations) {
  DhtExperimentConfig c;
  c.peers = 1;
  EXPECT_THROW(run_dht_experiment(c), std::invalid_argument);
  c.peers = 10;
  c.backbone_peers = 11;
  EXPECT_THROW(run_dht_experiment(c), std::invalid_argument);
  c.backbone_peers = 3;
  c.churn_per_hour = -1;
  EXPECT_THROW(run_dht_experiment(c), std::invalid_argument);
}

}  // namespace
}  // namespace swarmlab::sim
