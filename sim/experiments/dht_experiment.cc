#include "sim/experiments/dht_experiment.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/dht/node.h"
#include "core/rng.h"
#include "sim/engine.h"
#include "sim/network/latency_network.h"
#include "sim/binding/sim_world.h"

namespace swarmlab::sim {
namespace {

using core::PeerId;
using core::Seconds;
namespace dht = core::dht;

// Nearest-rank percentile of a sorted sample.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

// A set of indices with O(1) insert, erase and uniform draw (deterministic order).
class IndexSet {
 public:
  void insert(std::uint32_t v) {
    if (v >= pos_.size()) pos_.resize(v + 1, kAbsent);
    if (pos_[v] != kAbsent) return;
    pos_[v] = static_cast<std::uint32_t>(items_.size());
    items_.push_back(v);
  }
  void erase(std::uint32_t v) {
    if (v >= pos_.size() || pos_[v] == kAbsent) return;
    const std::uint32_t at = pos_[v];
    items_[at] = items_.back();
    pos_[items_[at]] = at;
    items_.pop_back();
    pos_[v] = kAbsent;
  }
  bool contains(std::uint32_t v) const { return v < pos_.size() && pos_[v] != kAbsent; }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::uint32_t draw(core::Rng& rng) const { return items_[rng.below(items_.size())]; }
  const std::vector<std::uint32_t>& items() const { return items_; }

 private:
  static constexpr std::uint32_t kAbsent = 0xFFFFFFFFu;
  std::vector<std::uint32_t> items_;
  std::vector<std::uint32_t> pos_;
};

class Experiment {
  static constexpr Seconds kDrain = 30;

 public:
  explicit Experiment(const DhtExperimentConfig& c) : c_(c), rng_(c.seed, 0xD47) {
    if (c_.peers < 2) throw std::invalid_argument("dht experiment: need at least 2 peers");
    if (c_.backbone_peers < 1 || c_.backbone_peers > c_.peers)
      throw std::invalid_argument("dht experiment: backbone peers must be in [1, peers]");
    if (!(c_.churn_per_hour >= 0) || !(c_.hours >= 0)) throw std::invalid_argument("dht experiment: bad churn or hours");
    if (!(c_.min_bandwidth_bps > 0) || !(c_.max_bandwidth_bps >= c_.min_bandwidth_bps) || !(c_.min_latency_s > 0) ||
        !(c_.max_latency_s >= c_.min_latency_s))
      throw std::invalid_argument("dht experiment: bad log-uniform range");
    // Every replacement takes a fresh transport address, allocated up front.
    if (c_.churn_per_hour * c_.peers * c_.hours > 1e7)
      throw std::invalid_argument("dht experiment: more than 10 million replacements requested");
    join_window_ = c_.join_window_s >= 0 ? c_.join_window_s : std::max(60.0, 0.05 * c_.peers);
    measure_start_ = join_window_ + c_.settle_s;
    measure_end_ = measure_start_ + c_.hours * 3600.0;

    // Churn times are drawn up front: they fix how many transport addresses the run needs.
    const double churn_rate = c_.churn_per_hour * c_.peers / 3600.0;
    if (churn_rate > 0)
      for (Seconds t = measure_start_ + rng_.exponential(1 / churn_rate); t < measure_end_;
           t += rng_.exponential(1 / churn_rate))
        churn_times_.push_back(t);

    const std::size_t slots = c_.peers + churn_times_.size();
    std::vector<LinkSpec> links(slots);
    std::vector<SimPeerSpec> specs(slots);
    for (std::size_t i = 0; i < slots; ++i) {
      const double down = rng_.log_uniform(c_.min_bandwidth_bps, c_.max_bandwidth_bps);
      links[i] = LinkSpec{down, down / 4, rng_.log_uniform(c_.min_latency_s, c_.max_latency_s)};
      specs[i].name = std::to_string(i);
    }
    network_ = std::make_unique<LatencyNetwork>(engine_, std::move(links));
    world_ = std::make_unique<SimWorld>(engine_, *network_, std::move(specs), c_.seed);
    nodes_.resize(slots);
    for (std::size_t i = c_.peers; i < slots; ++i) world_->set_down(static_cast<PeerId>(i));
    next_slot_ = c_.peers;
  }

  DhtExperimentResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    for (PeerId p = 0; p < c_.backbone_peers; ++p) backbone_.push_back(p);
    for (PeerId p = 0; p < c_.backbone_peers; ++p) start_peer(p);
    for (PeerId p = c_.backbone_peers; p < c_.peers; ++p) {
      const Seconds at = rng_.uniform() * join_window_;
      engine_.at(at, [this, p] { start_peer(p); });
    }
    engine_.at(measure_start_, [this] { begin_measurement(); });
    std::chrono::steady_clock::time_point measure_wall_start = wall_start, measure_wall_end = wall_start;
    engine_.at(measure_start_, [&] { measure_wall_start = std::chrono::steady_clock::now(); });
    engine_.at(measure_end_, [&, this] {
      sent_at_end_ = traffic();
      measure_wall_end = std::chrono::steady_clock::now();
    });
    for (Seconds t : churn_times_) engine_.at(t, [this] { churn(); });
    // Nothing new starts after measure_end; the drain lets operations in flight finish, so a get
    // is lost only if its getter left.
    engine_.run_until(measure_end_ + kDrain);
    DhtExperimentResult r = collect();
    r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    r.wall_measured_s = std::chrono::duration<double>(measure_wall_end - measure_wall_start).count();
    return r;
  }

 private:
  struct Key {
    std::string name;
    PeerId owner = 0;
    Seconds retire_at = 0;       // the owner stops republishing after this
    Seconds expiration = 0;      // of the last successful store
    bool stored = false;
  };
  void start_peer(PeerId p) {
    core::Environment& env = world_->env(p);
    nodes_[p] = std::make_unique<dht::DhtNode>(env, dht::NodeId::random(env.rng(), c_.dht.id_bits), c_.dht);
    env.set_sink(nodes_[p].get());
    ++joins_;
    std::vector<PeerId> initial;
    for (PeerId b : backbone_)
      if (b != p) initial.push_back(b);
    nodes_[p]->bootstrap(initial, [this, p](bool) {
      if (world_->is_up(p)) live_.insert(p);
    });
  }

  void begin_measurement() {
    sent_at_start_ = traffic();
    schedule_next_put();
    schedule_next_get();
  }

  struct Traffic {
    std::uint64_t messages = 0, bytes = 0, lookups = 0, find_requests = 0, store_requests = 0, pings = 0;
  };
  Traffic traffic() const {
    Traffic t;
    for (const auto& n : nodes_)
      if (n) {
        const dht::DhtStats& s = n->stats();
        t.messages += s.messages_sent;
        t.bytes += s.bytes_sent;
        t.lookups += s.lookups;
        t.find_requests += s.find_requests;
        t.store_requests += s.store_requests;
        t.pings += s.liveness_pings;
      }
    return t;
  }

  double aggregate_rate(double per_peer_per_hour) const {
    return per_peer_per_hour * static_cast<double>(c_.peers) / 3600.0;
  }

  void schedule_next_put() {
    const double rate = aggregate_rate(c_.puts_per_peer_per_hour);
    if (!(rate > 0)) return;
    engine_.after(rng_.exponential(1 / rate), [this] {
      if (engine_.now() >= measure_end_) return;
      if (!live_.empty()) put(live_.draw(rng_));
      schedule_next_put();
    });
  }

  void schedule_next_get() {
    const double rate = aggregate_rate(c_.gets_per_peer_per_hour);
    if (!(rate > 0)) return;
    engine_.after(rng_.exponential(1 / rate), [this] {
      if (engine_.now() >= measure_end_) return;
      if (!live_.empty()) get(live_.draw(rng_));
      schedule_next_get();
    });
  }

  dht::Bytes value_of(std::uint32_t key) const {
    dht::Bytes v(c_.value_bytes);
    std::uint64_t x = key * 0x9E3779B97F4A7C15ull + c_.seed;
    for (auto& b : v) b = static_cast<std::uint8_t>(core::splitmix64(x));
    return v;
  }

  void put(PeerId owner) {
    const auto k = static_cast<std::uint32_t>(keys_.size());
    std::string name = "key/";
    name += std::to_string(k);
    keys_.push_back(Key{std::move(name), owner, engine_.now() + c_.key_lifetime_s, 0, false});
    ++puts_;
    publish(k, true);
  }

  void publish(std::uint32_t k, bool first) {
    const PeerId owner = keys_[k].owner;
    if (!world_->is_up(owner)) return;
    const Seconds expiration = engine_.now() + c_.value_ttl_s;
    nodes_[owner]->store(keys_[k].name, value_of(k), expiration, [this, k, first, expiration](const dht::StoreResult& r) {
      if (first) {
        ++puts_done_;
        puts_ok_ += r.ok;
      } else {
        ++republishes_;
        republishes_ok_ += r.ok;
      }
      Key& key = keys_[k];
      if (r.ok) {
        key.expiration = std::max(key.expiration, expiration);
        if (!key.stored) {
          key.stored = true;
          candidates_.insert(k);
        }
      }
    });
    engine_.after(c_.republish_period_s, [this, k] {
      if (engine_.now() < keys_[k].retire_at && engine_.now() < measure_end_) publish(k, false);
    });
  }

  // A key that is live now, or nullopt; forgets keys that can never be live again.
  std::optional<std::uint32_t> live_key() {
    while (!candidates_.empty()) {
      const std::uint32_t k = candidates_.draw(rng_);
      const Key& key = keys_[k];
      if (world_->is_up(key.owner) && key.expiration > engine_.now()) return k;
      candidates_.erase(k);  // expired, or its owner left: it stays dead
    }
    return std::nullopt;
  }

  void get(PeerId getter) {
    const auto k = live_key();
    if (!k) return;
    ++gets_issued_;
    nodes_[getter]->get(keys_[*k].name, [this, k = *k](std::optional<dht::Record> record, const dht::LookupStats& s) {
      const Key& key = keys_[k];
      if (!world_->is_up(key.owner) || key.expiration <= engine_.now()) {
        ++gets_key_died_;  // no longer live when the answer came: not counted either way
        return;
      }
      ++gets_;
      const bool ok = record && !record->is_dictionary() && record->value().value == value_of(k);
      if (!ok) return;
      ++gets_ok_;
      if (static_cast<std::size_t>(s.hops) >= hops_.size()) hops_.resize(s.hops + 1);
      ++hops_[s.hops];
      hop_samples_.push_back(s.hops);
      latencies_.push_back(s.latency_s);
    });
  }

  void churn() {
    // Draw among live non-backbone peers (the live set holds joined peers only).
    for (int attempt = 0; attempt < 64 && !live_.empty(); ++attempt) {
      const PeerId victim = live_.draw(rng_);
      if (victim < c_.backbone_peers) continue;
      live_.erase(victim);
      world_->set_down(victim);
      ++departures_;
      break;
    }
    if (next_slot_ < nodes_.size()) {
      const PeerId fresh = next_slot_++;
      world_->set_up(fresh);
      start_peer(fresh);
    }
  }

  DhtExperimentResult collect() {
    DhtExperimentResult r;
    r.peers = c_.peers;
    r.churn_per_hour = c_.churn_per_hour;
    r.hours = c_.hours;
    r.seed = c_.seed;
    r.gets = gets_;
    r.gets_ok = gets_ok_;
    r.gets_lost = gets_issued_ - gets_ - gets_key_died_;
    r.gets_key_died = gets_key_died_;
    r.puts = puts_done_;
    r.puts_ok = puts_ok_;
    r.republishes = republishes_;
    r.republishes_ok = republishes_ok_;
    r.get_success_rate = gets_ ? static_cast<double>(gets_ok_) / static_cast<double>(gets_) : 0;
    const std::uint64_t stores = puts_done_ + republishes_;
    r.store_success_rate = stores ? static_cast<double>(puts_ok_ + republishes_ok_) / static_cast<double>(stores) : 0;

    r.hops_histogram = hops_;
    std::vector<double> hops(hop_samples_.begin(), hop_samples_.end());
    std::sort(hops.begin(), hops.end());
    r.hops_median = percentile(hops, 0.5);
    r.hops_p99 = percentile(hops, 0.99);
    double sum = 0;
    for (double h : hops) sum += h;
    r.hops_mean = hops.empty() ? 0 : sum / static_cast<double>(hops.size());
    const double k = static_cast<double>(c_.dht.bucket_size);
    r.id_bits = c_.dht.id_bits;
    r.bucket_size = c_.dht.bucket_size;
    r.hop_bound = std::ceil(std::log2(static_cast<double>(c_.peers)) / std::log2(k)) + 2;

    std::vector<double> lat = latencies_;
    std::sort(lat.begin(), lat.end());
    r.latency_median_s = percentile(lat, 0.5);
    r.latency_p99_s = percentile(lat, 0.99);
    sum = 0;
    for (double l : lat) sum += l;
    r.latency_mean_s = lat.empty() ? 0 : sum / static_cast<double>(lat.size());

    const double peer_minutes = static_cast<double>(c_.peers) * c_.hours * 60.0;
    if (peer_minutes > 0) {
      auto rate = [&](std::uint64_t Traffic::*field) {
        return static_cast<double>(sent_at_end_.*field - sent_at_start_.*field) / peer_minutes;
      };
      r.messages_per_peer_minute = rate(&Traffic::messages);
      r.bytes_per_peer_minute = rate(&Traffic::bytes);
      r.lookups_per_peer_minute = rate(&Traffic::lookups);
      r.find_requests_per_peer_minute = rate(&Traffic::find_requests);
      r.store_requests_per_peer_minute = rate(&Traffic::store_requests);
      r.liveness_pings_per_peer_minute = rate(&Traffic::pings);
    }
    for (const auto& n : nodes_)
      if (n) {
        const auto& s = n->stats();
        r.messages_dropped += s.dropped_malformed + s.dropped_clock_skew + s.dropped_unexpected;
      }

    std::uint64_t entries = 0, alive = 0, buckets = 0, tables = 0;
    for (PeerId p : live_.items()) {
      const dht::RoutingTable& t = nodes_[p]->routing_table();
      ++tables;
      buckets += t.nonempty_buckets();
      t.for_each([&](const dht::RoutingTable::Entry& e) {
        ++entries;
        const PeerId q = e.contact.peer;
        alive += q < nodes_.size() && world_->is_up(q) && nodes_[q] && nodes_[q]->id() == e.contact.id;
      });
    }
    r.routing_alive_fraction = entries ? static_cast<double>(alive) / static_cast<double>(entries) : 0;
    r.routing_mean_entries = tables ? static_cast<double>(entries) / static_cast<double>(tables) : 0;
    r.routing_mean_buckets = tables ? static_cast<double>(buckets) / static_cast<double>(tables) : 0;

    r.joins = joins_;
    r.departures = departures_;
    std::uint64_t live_keys = 0;
    for (std::uint32_t k : candidates_.items())
      live_keys += world_->is_up(keys_[k].owner) && keys_[k].expiration > engine_.now();
    r.live_keys_at_end = live_keys;
    r.events = engine_.events_processed();
    r.simulated_s = measure_end_;
    return r;
  }

  DhtExperimentConfig c_;
  core::Rng rng_;
  Seconds join_window_ = 0, measure_start_ = 0, measure_end_ = 0;
  std::vector<Seconds> churn_times_;
  Engine engine_;
  std::unique_ptr<LatencyNetwork> network_;
  std::unique_ptr<SimWorld> world_;
  std::vector<std::unique_ptr<dht::DhtNode>> nodes_;  // by transport slot; departed nodes are kept
  std::vector<PeerId> backbone_;
  PeerId next_slot_ = 0;
  IndexSet live_;        // joined peers that are up
  IndexSet candidates_;  // keys that may be live (checked on draw)
  std::vector<Key> keys_;
  Traffic sent_at_start_, sent_at_end_;
  std::uint64_t joins_ = 0, departures_ = 0;
  std::uint64_t puts_ = 0, puts_done_ = 0, puts_ok_ = 0, republishes_ = 0, republishes_ok_ = 0;
  std::uint64_t gets_issued_ = 0, gets_ = 0, gets_ok_ = 0, gets_key_died_ = 0;
  std::vector<std::uint64_t> hops_;
  std::vector<int> hop_samples_;
  std::vector<double> latencies_;
};

}  // namespace

DhtExperimentResult run_dht_experiment(const DhtExperimentConfig& config) { return Experiment(config).run(); }

}  // namespace swarmlab::sim
