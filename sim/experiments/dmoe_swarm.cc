#include "sim/experiments/dmoe_swarm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>

#include "core/dht/node.h"
#include "core/dmoe/dmoe_layer.h"
#include "core/dmoe/dmoe_stack.h"
#include "core/dmoe/expert_runtime.h"
#include "core/service_mux.h"
#include "sim/binding/sim_world.h"
#include "sim/binding/virtual_expert_backend.h"
#include "sim/engine.h"
#include "sim/network/latency_network.h"

namespace swarmlab::sim {
namespace {

namespace dht = core::dht;
namespace dmoe = core::dmoe;

class Swarm {
 public:
  explicit Swarm(const DmoeSwarmConfig& c) : c_(c), rng_(c.seed, 0xD30E) {
    if (c_.runtimes < 1 || c_.backbone < 1 || c_.backbone > c_.runtimes)
      throw std::invalid_argument("dmoe swarm: need 1 <= backbone <= runtimes");
    if (c_.trainers < 1 || c_.layers < 1 || c_.k < 1 || c_.experts_per_runtime < 1 || c_.batch_rows < 1 || c_.width < 1)
      throw std::invalid_argument("dmoe swarm: trainers, layers, k, experts per runtime, batch rows and width must be positive");
    if (c_.runtimes < c_.layers) throw std::invalid_argument("dmoe swarm: need at least one runtime per layer");
    if (!(c_.hours > 0) || !(c_.churn_per_hour >= 0) || !(c_.silent_share >= 0 && c_.silent_share <= 1))
      throw std::invalid_argument("dmoe swarm: bad hours, churn or silent share");
    if (!(c_.min_bandwidth_bps > 0) || !(c_.max_bandwidth_bps >= c_.min_bandwidth_bps) || !(c_.min_latency_s >= 0) ||
        !(c_.max_latency_s >= c_.min_latency_s))
      throw std::invalid_argument("dmoe swarm: bad bandwidth or latency range");
    for (std::uint32_t l = 0; l < c_.layers; ++l) {
      grids_.push_back({"layer" + std::to_string(l), c_.grid_dims, c_.grid_side});
      grids_.back().check();
    }
    if (c_.experts_per_runtime > c_.grid_side)
      throw std::invalid_argument("dmoe swarm: a runtime's experts_per_runtime must fit along the grid's side");
    const std::uint64_t runtimes_per_layer = (c_.runtimes + c_.layers - 1) / c_.layers;
    const std::uint64_t blocks = grids_[0].capacity() / c_.grid_side * (c_.grid_side / c_.experts_per_runtime);
    if (runtimes_per_layer > blocks)
      throw std::invalid_argument("dmoe swarm: " + std::to_string(runtimes_per_layer) + " runtimes per layer need more blocks of " +
                                  std::to_string(c_.experts_per_runtime) + " experts than a grid of " +
                                  std::to_string(grids_[0].capacity()) + " holds");
    const std::uint32_t peers = c_.runtimes + c_.trainers;
    join_window_ = c_.join_window_s >= 0 ? c_.join_window_s : std::max(60.0, 0.05 * peers);
    measure_start_ = join_window_ + c_.settle_s;
    measure_end_ = measure_start_ + c_.hours * 3600;

    std::vector<LinkSpec> links(peers);
    std::vector<SimPeerSpec> specs(peers);
    for (std::uint32_t i = 0; i < peers; ++i) {
      const double down = rng_.log_uniform(c_.min_bandwidth_bps, c_.max_bandwidth_bps);
      links[i] = LinkSpec{down, down / 4, c_.min_latency_s + (c_.max_latency_s - c_.min_latency_s) * rng_.uniform()};
      specs[i].name = std::to_string(i);
      if (i < c_.runtimes) {
        const double share = c_.min_gpu_share + (c_.max_gpu_share - c_.min_gpu_share) * rng_.uniform();
        specs[i].compute_sps = share * c_.gpu_flops / c_.expert_forward_flops_per_row;
      }
    }
    network_ = std::make_unique<LatencyNetwork>(engine_, std::move(links));
    if (c_.packet_loss > 0) network_->set_packet_loss(c_.packet_loss, c_.seed);
    world_ = std::make_unique<SimWorld>(engine_, *network_, std::move(specs), c_.seed);

    // Each runtime hosts a block of experts_per_runtime neighbours along the last grid dimension
    // (the same prefix up to it, as a server hosting "layer.5.8.*" would), so it announces one
    // prefix per level; blocks are drawn from the seed, distinct within a layer.
    experts_.resize(c_.runtimes);
    const std::uint64_t blocks_per_layer = grids_[0].capacity() / c_.grid_side * (c_.grid_side / c_.experts_per_runtime);
    for (std::uint32_t l = 0; l < c_.layers; ++l) {
      std::set<std::uint64_t> taken;  // drawn until unused: runtimes are few next to a large grid
      for (std::uint32_t r = l; r < c_.runtimes; r += c_.layers) {
        std::uint64_t block = rng_.below(blocks_per_layer);
        while (!taken.insert(block).second) block = rng_.below(blocks_per_layer);
        const std::uint64_t per_row = c_.grid_side / c_.experts_per_runtime;
        const std::uint64_t first = block / per_row * c_.grid_side + block % per_row * c_.experts_per_runtime;
        for (std::uint32_t e = 0; e < c_.experts_per_runtime; ++e) experts_[r].push_back(grids_[l].uid_at(first + e));
      }
    }
    runtimes_.resize(c_.runtimes);
    trainers_.resize(c_.trainers);
  }

  DmoeSwarmResult run() {
    const auto wall_start = std::chrono::steady_clock::now();
    for (PeerId p = 0; p < c_.backbone; ++p) start_runtime(p);
    for (PeerId p = c_.backbone; p < c_.runtimes; ++p) engine_.at(rng_.uniform() * join_window_, [this, p] { start_runtime(p); });
    for (std::uint32_t t = 0; t < c_.trainers; ++t) engine_.at(rng_.uniform() * join_window_, [this, t] { start_trainer(t); });
    auto measure_wall_start = wall_start, measure_wall_end = wall_start;
    engine_.at(measure_start_, [&, this] {
      measure_wall_start = std::chrono::steady_clock::now();
      traffic_start_ = traffic();
      stores_start_ = announcement_stores();
      for (std::uint32_t t = 0; t < c_.trainers; ++t) start_batch(t);
    });
    engine_.at(measure_end_, [&, this] {
      measure_wall_end = std::chrono::steady_clock::now();
      traffic_end_ = traffic();
      r_.announcement_stores = announcement_stores() - stores_start_;
    });
    const double churn_rate = c_.churn_per_hour * c_.runtimes / 3600.0;
    if (churn_rate > 0)
      for (core::Seconds t = measure_start_ + rng_.exponential(1 / churn_rate); t < measure_end_;
           t += rng_.exponential(1 / churn_rate))
        engine_.at(t, [this] { fail_one(); });
    engine_.run_until(measure_end_);
    collect();
    r_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    r_.wall_measured_s = std::chrono::duration<double>(measure_wall_end - measure_wall_start).count();
    return r_;
  }

 private:
  struct RuntimePeer {  // destroyed bottom-up: the keeper first, the mux last
    std::unique_ptr<core::ServiceMux> mux;
    std::unique_ptr<dht::DhtNode> dht;
    std::unique_ptr<VirtualExpertBackend> backend;
    std::unique_ptr<dmoe::ExpertRuntime> runtime;
    std::unique_ptr<dmoe::ExpertAnnouncer> announcer;
    std::unique_ptr<dmoe::ExpertKeeper> keeper;
  };
  // A simulated trainer's own layers: random gate scores (no gate is trained here) and sizes only.
  class VirtualTrunk final : public dmoe::TrunkModel {
   public:
    VirtualTrunk(core::Environment& env, const std::vector<dmoe::ExpertGrid>& grids, std::uint32_t rows, std::uint32_t width)
        : env_(env), grids_(grids), rows_(rows), width_(width) {}
    std::vector<std::vector<double>> gate(std::uint64_t, std::uint32_t layer, const dmoe::Tensor&) override {
      std::vector<std::vector<double>> scores(grids_[layer].dims, std::vector<double>(grids_[layer].side));
      for (auto& row : scores)
        for (double& s : row) s = env_.rng().normal();
      return scores;
    }
    dmoe::Tensor output(std::uint64_t, std::uint32_t, dmoe::Tensor, const dmoe::Tensor&) override {
      return dmoe::Tensor::sized(rows_, width_);
    }
    dmoe::Tensor input_gradient(std::uint64_t, std::uint32_t, dmoe::Tensor, const dmoe::MixtureGradient&) override {
      return dmoe::Tensor::sized(rows_, width_);
    }

   private:
    core::Environment& env_;
    const std::vector<dmoe::ExpertGrid>& grids_;
    std::uint32_t rows_, width_;
  };
  struct TrainerPeer {
    std::unique_ptr<core::ServiceMux> mux;
    std::unique_ptr<dht::DhtNode> dht;
    std::unique_ptr<dmoe::ExpertClient> client;
    std::vector<std::unique_ptr<dmoe::DmoeLayer>> layers;
    std::unique_ptr<VirtualTrunk> trunk;
    std::unique_ptr<dmoe::DmoeStack> stack;
    std::uint64_t next_batch = 1;
  };

  bool measuring() const { return engine_.now() >= measure_start_ && engine_.now() < measure_end_; }
  std::vector<PeerId> backbone() const {
    std::vector<PeerId> b;
    for (PeerId p = 0; p < c_.backbone; ++p) b.push_back(p);
    return b;
  }

  void start_runtime(PeerId p) {
    core::Environment& env = world_->env(p);
    RuntimePeer& rp = runtimes_[p];
    rp.mux = std::make_unique<core::ServiceMux>([&env] { return env.now(); });
    rp.dht = std::make_unique<dht::DhtNode>(env, dht::NodeId::random(env.rng(), c_.dht.id_bits), c_.dht);
    rp.backend = std::make_unique<VirtualExpertBackend>(env, c_.width, c_.width);
    const dmoe::ExpertGrid& grid = grids_[p % c_.layers];
    rp.runtime = std::make_unique<dmoe::ExpertRuntime>(env, grid, *rp.backend);
    rp.announcer = std::make_unique<dmoe::ExpertAnnouncer>(env, *rp.dht, grid, c_.announce);
    rp.keeper = std::make_unique<dmoe::ExpertKeeper>(env, *rp.dht, *rp.runtime, *rp.announcer, c_.keeper);
    rp.mux->add(core::ServiceId::Dht, *rp.dht);
    rp.mux->add(core::ServiceId::Experts, *rp.runtime);
    rp.dht->set_liveness([mux = rp.mux.get()](PeerId q) { return mux->last_heard(q); });
    env.set_sink(rp.mux.get());
    for (const dmoe::ExpertUid& uid : experts_[p]) rp.runtime->host(uid);
    std::vector<PeerId> initial;
    for (PeerId b : backbone())
      if (b != p) initial.push_back(b);
    rp.dht->bootstrap(initial, [this, p](bool) {
      RuntimePeer& me = runtimes_[p];
      if (!world_->is_up(p)) return;
      me.announcer->start([rt = me.runtime.get()] { return std::vector<dmoe::ExpertUid>(rt->experts().begin(), rt->experts().end()); });
      const PeerId next = p + c_.layers < c_.runtimes ? p + c_.layers : p % c_.layers;
      me.keeper->start(next == p ? std::vector<dmoe::ExpertUid>{} : experts_[next]);
    });
  }

  void start_trainer(std::uint32_t t) {
    const PeerId p = c_.runtimes + t;
    core::Environment& env = world_->env(p);
    TrainerPeer& tp = trainers_[t];
    tp.mux = std::make_unique<core::ServiceMux>([&env] { return env.now(); });
    tp.dht = std::make_unique<dht::DhtNode>(env, dht::NodeId::random(env.rng(), c_.dht.id_bits), c_.dht);
    tp.client = std::make_unique<dmoe::ExpertClient>(env, c_.client);
    tp.mux->add(core::ServiceId::Dht, *tp.dht);
    tp.mux->add(core::ServiceId::Experts, *tp.client);
    tp.dht->set_liveness([mux = tp.mux.get()](PeerId q) { return mux->last_heard(q); });
    std::vector<dmoe::DmoeLayer*> layers;
    for (std::uint32_t l = 0; l < c_.layers; ++l) {
      tp.layers.push_back(std::make_unique<dmoe::DmoeLayer>(env, *tp.dht, *tp.client, grids_[l], c_.k, c_.width, c_.width));
      layers.push_back(tp.layers.back().get());
    }
    tp.trunk = std::make_unique<VirtualTrunk>(env, grids_, c_.batch_rows, c_.width);
    tp.stack = std::make_unique<dmoe::DmoeStack>(env, std::move(layers), *tp.trunk);
    tp.stack->set_observer([this](std::uint32_t, const dmoe::LayerForward& out) { observe_search(out); });
    env.set_sink(tp.mux.get());
    tp.dht->bootstrap(backbone(), [](bool) {});
  }

  void fail_one() {
    // A random live runtime outside the backbone (a few tries; churn at this scale rarely misses).
    for (int attempt = 0; attempt < 64; ++attempt) {
      const PeerId p = c_.backbone + static_cast<PeerId>(rng_.below(c_.runtimes - c_.backbone));
      if (!world_->is_up(p) || !runtimes_[p].runtime) continue;
      world_->set_down(p, rng_.bernoulli(c_.silent_share) ? SimWorld::Departure::Silent : SimWorld::Departure::Crash);
      ++r_.failures;
      lost_peer_seconds_ += measure_end_ - engine_.now();
      return;
    }
  }

  void start_batch(std::uint32_t t) {
    if (engine_.now() >= measure_end_) return;
    TrainerPeer& tp = trainers_[t];
    const std::uint64_t batch = tp.next_batch++;
    const core::Seconds started = engine_.now();
    tp.stack->forward(batch, activation(), true, [this, t, batch, started](dmoe::StackForward up) {
      if (up.dropped != dmoe::BatchDrop::None) return end_batch(t, started, up.dropped);
      trainers_[t].stack->backward(batch, activation(), [this, t, started](dmoe::StackBackward down) {
        end_batch(t, started, down.dropped);
      });
    });
  }

  void end_batch(std::uint32_t t, core::Seconds started, dmoe::BatchDrop dropped) {
    if (measuring()) {
      if (dropped != dmoe::BatchDrop::None) {
        ++r_.dropped;
        ++(dropped == dmoe::BatchDrop::NoExperts ? r_.dropped_no_experts
           : dropped == dmoe::BatchDrop::NoAnswer ? r_.dropped_forward
                                                  : r_.dropped_backward);
      } else {
        ++r_.batches;
        batch_seconds_ += engine_.now() - started;
      }
    }
    world_->env(c_.runtimes + t).schedule(0, [this, t] { start_batch(t); });
  }

  dmoe::Tensor activation() const { return dmoe::Tensor::sized(c_.batch_rows, c_.width); }

  void observe_search(const dmoe::LayerForward& out) {
    if (!measuring()) return;
    ++r_.searches;
    r_.searches_found_k += out.search.experts.size() == c_.k;
    lookups_ += out.search.lookups;
    r_.max_lookups = std::max<std::uint64_t>(r_.max_lookups, out.search.lookups);
    search_seconds_ += out.search.latency_s;
  }

  struct Traffic {
    std::uint64_t messages = 0, bytes = 0;
  };
  Traffic traffic() const {
    Traffic x;
    const auto add = [&x](const std::unique_ptr<dht::DhtNode>& n) {
      if (!n) return;
      x.messages += n->stats().messages_sent;
      x.bytes += n->stats().bytes_sent;
    };
    for (const auto& r : runtimes_) add(r.dht);
    for (const auto& t : trainers_) add(t.dht);
    return x;
  }
  std::uint64_t announcement_stores() const {
    std::uint64_t n = 0;
    for (const auto& r : runtimes_)
      if (r.announcer) n += r.announcer->stats().stores;
    return n;
  }

  void collect() {
    r_.config = c_;
    r_.simulated_s = engine_.now();
    r_.events = engine_.events_processed();
    const double measured = measure_end_ - measure_start_;
    r_.samples_per_s = static_cast<double>(r_.batches) * c_.batch_rows / measured;
    r_.mean_batch_s = r_.batches ? batch_seconds_ / static_cast<double>(r_.batches) : 0;
    r_.found_k_share = r_.searches ? static_cast<double>(r_.searches_found_k) / static_cast<double>(r_.searches) : 0;
    r_.mean_lookups = r_.searches ? static_cast<double>(lookups_) / static_cast<double>(r_.searches) : 0;
    r_.mean_search_s = r_.searches ? search_seconds_ / static_cast<double>(r_.searches) : 0;
    r_.lookup_bound = static_cast<double>(c_.grid_dims) * c_.k * c_.grid_side;
    for (const auto& t : trainers_)
      if (t.client) {
        const auto& s = t.client->stats();
        r_.expert_calls += s.requests;
        r_.expert_timeouts += s.timed_out;
        r_.expert_refusals += s.refused;
        r_.expert_link_failures += s.link_failed;
      }
    r_.expert_failures = r_.expert_timeouts + r_.expert_refusals + r_.expert_link_failures;
    for (const auto& r : runtimes_)
      if (r.keeper) {
        r_.taken_over += r.keeper->stats().taken_over;
        r_.restarted_fresh += r.keeper->stats().restarted_fresh;
      }
    const double live_peers = static_cast<double>(c_.runtimes + c_.trainers) - lost_peer_seconds_ / measured;
    const double minutes = measured / 60;
    r_.dht_messages_per_peer_minute = static_cast<double>(traffic_end_.messages - traffic_start_.messages) / live_peers / minutes;
    r_.dht_bytes_per_peer_minute = static_cast<double>(traffic_end_.bytes - traffic_start_.bytes) / live_peers / minutes;
  }

  const DmoeSwarmConfig& c_;
  core::Rng rng_;
  std::vector<dmoe::ExpertGrid> grids_;
  core::Seconds join_window_ = 0, measure_start_ = 0, measure_end_ = 0;
  Engine engine_;
  std::unique_ptr<LatencyNetwork> network_;
  std::unique_ptr<SimWorld> world_;
  std::vector<std::vector<dmoe::ExpertUid>> experts_;
  std::vector<RuntimePeer> runtimes_;
  std::vector<TrainerPeer> trainers_;
  DmoeSwarmResult r_;
  Traffic traffic_start_, traffic_end_;
  std::uint64_t stores_start_ = 0, lookups_ = 0;
  double batch_seconds_ = 0, search_seconds_ = 0;
  double lost_peer_seconds_ = 0;  // measured time the failed runtimes were gone
};

}  // namespace

DmoeSwarmResult run_dmoe_swarm(const DmoeSwarmConfig& config) { return Swarm(config).run(); }

}  // namespace swarmlab::sim
