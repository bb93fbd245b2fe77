#include "sim/collaborative_training.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/training/collaborative_peer.h"
#include "sim/engine.h"
#include "sim/sim_world.h"

namespace swarmlab::sim {

using core::training::CollaborativePeer;

namespace {

// One peer across restarts, as the books see it.
struct PeerBooks {
  std::unique_ptr<CollaborativePeer> peer;  // null while down
  Seconds up_since = 0, up_total = 0;
  Seconds compute_before = 0;               // compute time of earlier incarnations
  bool syncing = false;
  Seconds sync_since = 0, sync_total = 0;
  bool in_round = false;
  Seconds round_since = 0, averaging_total = 0;
  std::uint64_t samples = 0, downloads = 0, received = 0, last_step = 0;
};

class CollaborativeRun {
 public:
  CollaborativeRun(const scenarios::Scenario& sc, const TrainingRunConfig& cfg) : sc_(sc), cfg_(cfg), t_(sc.training) {
    if (t_.mode != scenarios::TrainingMode::Dedloc)
      throw std::invalid_argument(sc.source + ": training.coordination \"dht\" runs the DeDLOC schedule only");
    if (cfg.duration_s) t_.duration_s = *cfg.duration_s;
    if (cfg.dpu) t_.dpu = *cfg.dpu;
    network_ = make_scenario_network(sc, cfg.transport, cfg.backend, engine_);
    world_ = std::make_unique<SimWorld>(engine_, *network_, sim_peers(sc), sc.seed);
    world_->set_delivery_observer([this](PeerId, PeerId to, const core::Message& m) { books_[to].received += m.wire_size(); });
    books_.resize(sc.peers.size());
    timeouts_ = scenario_timeouts(sc, cfg.timeouts);
    state_bytes_ = static_cast<std::uint64_t>(std::llround(t_.state_bytes_per_parameter * static_cast<double>(sc.workload.parameters)));
  }

  TrainingRunResult run() {
    for (PeerId i = 0; i < n(); ++i) {
      if (sc_.peer_up(i, 0)) bring_up(i);
      else world_->set_down(i, SimWorld::Departure::Silent);
    }
    schedule_availability(sc_, engine_, [this](PeerId i) { bring_up(i); }, [this](PeerId i) { take_down(i); });
    // A peer measures its link and announces the new rates in its next matchmaking.
    for (const auto& e : sc_.bandwidth.events) {
      const auto i = static_cast<PeerId>(*sc_.find_peer(e.peer));
      engine_.at(e.time_s, [this, i] { if (books_[i].peer) books_[i].peer->set_capacity(capacity(i)); });
    }
    for (double t = t_.metrics_interval_s; t <= t_.duration_s + 1e-9; t += t_.metrics_interval_s)
      engine_.at(t, [this] { sample_series(); });
    engine_.run_until(t_.duration_s);
    return finish();
  }

 private:
  PeerId n() const { return static_cast<PeerId>(sc_.peers.size()); }
  bool computes(PeerId i) const { return sc_.peers[i].compute_sps > 0; }

  core::planner::PeerCapacity capacity(PeerId i) const {
    const auto& p = sc_.peers[i];
    const auto [down, up] = sc_.peer_bandwidth(i, engine_.now());
    const double g = cfg_.transport.goodput_fraction;
    return {p.compute_sps, down * g, up * g, p.reachability == scenarios::Reachability::Client};
  }

  core::training::CollaborativePeerConfig peer_config(PeerId i) const {
    core::training::CollaborativePeerConfig c;
    c.run = sc_.name;
    c.target_batch = sc_.workload.target_batch;
    c.dpu = t_.dpu;
    c.parameters = sc_.workload.parameters;
    c.codec = codec_for(sc_.workload.wire_precision);
    c.part_bytes = sc_.averaging.part_bytes;
    c.strategy = strategy_for(sc_.averaging.strategy);
    c.timeouts = timeouts_;
    c.capacity = capacity(i);
    c.trainer.micro_batch = t_.micro_batch;
    c.state.state_bytes = state_bytes_;
    c.state.chunk_bytes = t_.state_chunk_bytes;
    // One group for the whole collaboration unless the scenario asks for Moshpit-sized groups.
    c.matchmaking.prefix = sc_.name + "_averaging";
    c.matchmaking.target_group_size = std::max<std::size_t>(2, sc_.averaging.group_size.value_or(sc_.peers.size()));
    c.matchmaking.min_group_size = 2;
    c.progress_expiration = 30;  // DeDLOC's ALBERT runs (docs/hivemind.md §1)
    return c;
  }

  core::training::CollaborativePeerEvents peer_events(PeerId i) {
    core::training::CollaborativePeerEvents e;
    e.computed = [this, i](std::uint64_t s) {
      ledger_.on_computed(s);
      books_[i].samples += s;
      bucket_samples_ += s;
    };
    e.round_started = [this, i](const core::averaging::RoundPlan&, std::uint64_t) {
      books_[i].in_round = true;
      books_[i].round_since = engine_.now();
      if (in_round_++ == 0) busy_since_ = engine_.now();
    };
    e.round_finished = [this, i](const core::averaging::RoundOutcome&, std::uint64_t contributed, std::uint64_t step) {
      ledger_.on_stepped(contributed);
      leave_round(i);
      books_[i].last_step = step;
      while (global_step_ < step) {
        ++global_step_;
        step_times_.push_back(engine_.now());
      }
    };
    e.sync_started = [this, i](PeerId) {
      if (!books_[i].syncing) books_[i].sync_since = engine_.now();
      books_[i].syncing = true;
    };
    e.sync_finished = [this, i](bool ok, std::uint64_t) {
      PeerBooks& b = books_[i];
      if (ok) ++b.downloads, ++downloads_;
      b.sync_total += engine_.now() - b.sync_since;
      b.syncing = false;
    };
    e.discarded = [this](std::uint64_t s) { ledger_.on_lost(s); };
    return e;
  }

  void leave_round(PeerId i) {
    PeerBooks& b = books_[i];
    if (!b.in_round) return;
    b.in_round = false;
    b.averaging_total += engine_.now() - b.round_since;
    if (--in_round_ == 0) averaging_s_ += engine_.now() - busy_since_;
  }

  void bring_up(PeerId i) {
    PeerBooks& b = books_[i];
    if (b.peer) return;
    world_->set_up(i);
    b.up_since = engine_.now();
    b.peer = std::make_unique<CollaborativePeer>(world_->env(i), peer_config(i), peer_events(i));
    std::vector<PeerId> bootstrap;
    for (PeerId j = 0; j < n() && bootstrap.empty(); ++j)
      if (j != i && books_[j].peer) bootstrap.push_back(j);
    b.peer->start(std::move(bootstrap));
  }

  void take_down(PeerId i) {
    PeerBooks& b = books_[i];
    if (!b.peer) return;
    const Seconds now = engine_.now();
    b.up_total += now - b.up_since;
    b.compute_before += b.peer->compute_time();
    if (b.syncing) b.sync_total += now - b.sync_since, b.syncing = false;
    // What it had computed and not yet seen in a step dies with it.
    ledger_.on_lost(b.peer->accumulated() + (b.in_round ? b.peer->contributed() : 0));
    leave_round(i);
    world_->set_down(i, SimWorld::Departure::Crash);
    b.peer.reset();
  }


  void sample_series() {
    TrainingTimePoint pt;
    pt.t_s = engine_.now();
    pt.samples_per_s = static_cast<double>(bucket_samples_) / t_.metrics_interval_s;
    for (PeerId i = 0; i < n(); ++i)
      pt.active_peers += computes(i) && books_[i].peer && books_[i].peer->phase() == CollaborativePeer::Phase::Training;
    pt.steps = global_step_;
    series_.push_back(pt);
    bucket_samples_ = 0;
  }

  TrainingRunResult finish() {
    const Seconds end = t_.duration_s;
    TrainingRunResult r;
    r.scenario = sc_.name;
    r.mode = "dedloc";
    r.coordination = "dht";
    r.dpu = t_.dpu;
    r.duration_s = end;
    r.steps = global_step_;
    r.steps_per_hour = static_cast<double>(global_step_) / (end / 3600.0);
    r.step_times = step_times_;
    r.averaging_s = averaging_s_ + (in_round_ > 0 ? end - busy_since_ : 0);
    r.mean_round_s = global_step_ ? averaging_s_ / static_cast<double>(global_step_) : 0;
    r.rounds_simulated = global_step_;
    r.ledger = ledger_;
    r.series = series_;
    r.state_downloads = downloads_;
    r.state_bytes = state_bytes_;
    r.gradient_bytes = core::codec::encoded_size(codec_for(sc_.workload.wire_precision), sc_.workload.parameters);
    for (PeerId i = 0; i < n(); ++i) {
      const PeerBooks& b = books_[i];
      const bool up = static_cast<bool>(b.peer);
      PeerTrainingStats s;
      s.name = sc_.peers[i].name;
      s.computes = computes(i);
      s.up_s = b.up_total + (up ? end - b.up_since : 0);
      s.compute_s = b.compute_before + (up ? b.peer->compute_time() : 0);
      s.averaging_s = b.averaging_total + (b.in_round ? end - b.round_since : 0);
      s.sync_s = b.sync_total + (b.syncing ? end - b.sync_since : 0);
      s.bytes_sent = world_->bytes_sent(i);
      s.bytes_received = b.received;
      s.samples = b.samples;
      s.state_downloads = b.downloads;
      s.step = up ? b.peer->step() : b.last_step;
      s.up_at_end = up;
      s.training_at_end = up && b.peer->phase() == CollaborativePeer::Phase::Training;
      if (up) r.pending_check += b.peer->accumulated() + (b.peer->in_round() ? b.peer->contributed() : 0);
      r.peers.push_back(std::move(s));
    }
    summarise_peers(r);
    r.events = engine_.events_processed();
    return r;
  }

  const scenarios::Scenario& sc_;
  const TrainingRunConfig& cfg_;
  scenarios::TrainingSpec t_;
  Engine engine_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<SimWorld> world_;
  std::vector<PeerBooks> books_;
  core::averaging::Timeouts timeouts_;
  std::uint64_t state_bytes_ = 0;
  core::training::SampleLedger ledger_;
  std::uint64_t global_step_ = 0;
  std::vector<double> step_times_;
  std::size_t in_round_ = 0;  // peers inside a round
  Seconds busy_since_ = 0, averaging_s_ = 0;
  std::uint64_t downloads_ = 0, bucket_samples_ = 0;
  std::vector<TrainingTimePoint> series_;
};

}  // namespace

TrainingRunResult run_collaborative_training(const scenarios::Scenario& scenario, const TrainingRunConfig& config) {
  CollaborativeRun run(scenario, config);
  return run.run();
}

}  // namespace swarmlab::sim
