#include "sim/experiments/training_experiment.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include "core/codec/codec.h"
#include "core/training/compute_reward.h"
#include "sim/scenario/peer_setup.h"
#include "sim/scenario/swarm.h"

namespace swarmlab::sim {

using core::training::CollaborativePeer;

namespace {

// One peer across restarts, as the books see it.
struct PeerBooks {
  bool up = false;
  Seconds up_since = 0, up_total = 0;
  Seconds compute_before = 0;  // compute time of earlier incarnations
  bool syncing = false;
  Seconds sync_since = 0, sync_total = 0;
  bool in_round = false;
  Seconds round_since = 0, averaging_total = 0;
  bool waiting = false;
  Seconds wait_since = 0, wait_total = 0;
  std::uint64_t samples = 0, downloads = 0, update_downloads = 0, last_step = 0;
  std::uint64_t eligible = 0, left_out = 0;
  std::uint64_t relayed_before = 0;  // bytes relayed by earlier incarnations
};

class TrainingRun {
 public:
  TrainingRun(const scenarios::Scenario& sc, const TrainingRunConfig& cfg) : sc_(sc), t_(sc.training) {
    if (cfg.duration_s) t_.duration_s = *cfg.duration_s;
    coordination_ = cfg.coordination.value_or(t_.coordination);
    SwarmOptions o;
    o.backend = cfg.backend;
    o.transport = cfg.transport;
    o.coordination = coordination_;
    o.dpu = cfg.dpu;
    o.replay_rounds = cfg.replay_rounds;
    swarm_ = std::make_unique<SimSwarm>(sc, o, hooks());
    books_.resize(sc.peers.size());
    // The compute reward's reference: the scenario's, or the slowest peer that computes.
    for (const auto& p : sc.peers)
      if (p.compute_sps > 0 && (vcu_reference_sps_ == 0 || p.compute_sps < vcu_reference_sps_))
        vcu_reference_sps_ = p.compute_sps;
    if (t_.vcu_reference_sps) vcu_reference_sps_ = *t_.vcu_reference_sps;
  }

  TrainingRunResult run() {
    swarm_->start();
    for (double t = t_.metrics_interval_s; t <= t_.duration_s + 1e-9; t += t_.metrics_interval_s)
      swarm_->engine().at(t, [this] { sample_series(); });
    swarm_->engine().run_until(t_.duration_s);
    return finish();
  }

 private:
  PeerId n() const { return static_cast<PeerId>(sc_.peers.size()); }
  bool computes(PeerId i) const { return sc_.peers[i].compute_sps > 0; }
  Seconds now() { return swarm_->engine().now(); }

  SwarmHooks hooks() {
    SwarmHooks h;
    h.computed = [this](PeerId i, std::uint64_t s) {
      ledger_.on_computed(s);
      books_[i].samples += s;
      bucket_samples_ += s;
      const CollaborativePeer* p = swarm_->peer(i);
      if (p && p->quota_reached() && !books_[i].waiting) books_[i].waiting = true, books_[i].wait_since = now();
    };
    h.round_started = [this](PeerId i, const core::averaging::RoundPlan& plan, std::uint64_t) {
      PeerBooks& b = books_[i];
      if (b.waiting) b.wait_total += now() - b.wait_since, b.waiting = false;
      b.in_round = true;
      b.round_since = now();
      if (in_round_++ == 0) busy_since_ = now();
      if (rounds_seen_.insert(plan.round_id).second) ++rounds_;
    };
    h.grouped = [this](PeerId i, const core::matchmaking::Group&, std::uint64_t step) { track_step(i, step); };
    h.round_finished = [this](PeerId i, const core::averaging::RoundOutcome&, std::uint64_t contributed, std::uint64_t step) {
      ledger_.on_stepped(contributed);
      if (contributed > 0) coins_.credit_step(i, 1 / vcu_reference_sps_, 1 / sc_.peers[i].compute_sps, contributed);
      leave_round(i);
      books_[i].last_step = step;
      while (global_step_ < step) {
        ++global_step_;
        step_times_.push_back(now());
      }
    };
    h.sync_started = [this](PeerId i, PeerId) {
      if (!books_[i].syncing) books_[i].sync_since = now();
      books_[i].syncing = true;
    };
    h.sync_finished = [this](PeerId i, bool ok, std::uint64_t, bool updates) {
      PeerBooks& b = books_[i];
      if (ok && updates) ++b.update_downloads, ++update_downloads_;
      else if (ok) ++b.downloads, ++downloads_;
      b.sync_total += now() - b.sync_since;
      b.syncing = false;
    };
    h.discarded = [this](PeerId, std::uint64_t s) { ledger_.on_discarded(s); };
    h.up = [this](PeerId i) {
      books_[i].up = true;
      books_[i].up_since = now();
    };
    h.going_down = [this](PeerId i, const CollaborativePeer& p) {
      PeerBooks& b = books_[i];
      b.up = false;
      b.up_total += now() - b.up_since;
      b.compute_before += p.compute_time();
      if (b.syncing) b.sync_total += now() - b.sync_since, b.syncing = false;
      if (b.waiting) b.wait_total += now() - b.wait_since, b.waiting = false;
      // What it had computed and not yet seen in a step dies with it.
      ledger_.on_lost(p.accumulated() + (p.in_round() ? p.contributed() : 0));
      if (const auto* relay = swarm_->relayed(i)) b.relayed_before += relay->stats().forwarded_bytes;
      leave_round(i);
      b.last_step = p.step();
    };
    return h;
  }

  void leave_round(PeerId i) {
    PeerBooks& b = books_[i];
    if (!b.in_round) return;
    b.in_round = false;
    b.averaging_total += now() - b.round_since;
    if (--in_round_ == 0) averaging_s_ += now() - busy_since_;
  }

  // Who could have joined step `step` when its first group formed, and who did.
  void track_step(PeerId i, std::uint64_t step) {
    if (step > tracked_step_) {
      close_step();
      tracked_step_ = step;
      eligible_.clear();
      members_.clear();
      for (PeerId j = 0; j < n(); ++j) {
        const CollaborativePeer* p = swarm_->peer(j);
        if (p && p->phase() == CollaborativePeer::Phase::Training && p->step() + 1 == step) eligible_.insert(j);
      }
    }
    if (step == tracked_step_) members_.insert(i);
  }

  void close_step() {
    for (PeerId j : eligible_) {
      ++books_[j].eligible;
      if (!members_.count(j)) ++books_[j].left_out;
    }
  }

  void sample_series() {
    TrainingTimePoint pt;
    pt.t_s = now();
    pt.samples_per_s = static_cast<double>(bucket_samples_) / t_.metrics_interval_s;
    for (PeerId i = 0; i < n(); ++i) {
      const CollaborativePeer* p = swarm_->peer(i);
      pt.active_peers += computes(i) && p && p->phase() == CollaborativePeer::Phase::Training;
    }
    pt.steps = global_step_;
    series_.push_back(pt);
    bucket_samples_ = 0;
  }

  TrainingRunResult finish() {
    const Seconds end = t_.duration_s;
    TrainingRunResult r;
    r.scenario = sc_.name;
    r.mode = std::string(core::training::name(t_.mode));
    r.coordination = std::string(core::name_of(scenarios::kCoordinationNames, coordination_));
    r.authenticated = sc_.auth.has_value();
    r.nat_traversal = sc_.nat_traversal.has_value();
    r.dpu = swarm_->config(0).dpu;
    r.duration_s = end;
    r.steps = global_step_;
    r.steps_per_hour = static_cast<double>(global_step_) / (end / 3600.0);
    r.local_steps_per_step = t_.mode == core::training::Mode::Diloco ? t_.local_steps : 1;
    r.step_times = step_times_;
    r.rounds = rounds_;
    r.averaging_s = averaging_s_ + (in_round_ > 0 ? end - busy_since_ : 0);
    r.mean_round_s = global_step_ ? averaging_s_ / static_cast<double>(global_step_) : 0;
    if (const RoundReplay* replay = swarm_->replay()) {
      r.rounds_simulated = replay->stats().simulated;
      r.rounds_replayed = replay->stats().replayed;
    } else {
      r.rounds_simulated = rounds_;
    }
    r.ledger = ledger_;
    r.vcu_reference_sps = vcu_reference_sps_;
    r.vcu_total = coins_.total();
    r.series = series_;
    r.state_downloads = downloads_;
    r.update_downloads = update_downloads_;
    r.state_bytes = scenario_state_bytes(sc_);
    r.gradient_bytes = core::codec::encoded_size(sc_.workload.wire_precision, sc_.workload.parameters);
    std::size_t computing = 0;
    for (PeerId i = 0; i < n(); ++i) {
      const PeerBooks& b = books_[i];
      const CollaborativePeer* p = swarm_->peer(i);
      PeerTrainingStats s;
      s.name = sc_.peers[i].name;
      s.computes = computes(i);
      s.up_s = b.up_total + (p ? end - b.up_since : 0);
      s.compute_s = b.compute_before + (p ? p->compute_time() : 0);
      s.idle_s = std::max(0.0, s.up_s - s.compute_s);
      s.utilisation = s.computes && s.up_s > 0 ? s.compute_s / s.up_s : 0;
      s.averaging_s = b.averaging_total + (b.in_round ? end - b.round_since : 0);
      s.wait_s = b.wait_total + (b.waiting ? end - b.wait_since : 0);
      s.sync_s = b.sync_total + (b.syncing ? end - b.sync_since : 0);
      s.bytes_sent = swarm_->world().bytes_sent(i);
      s.bytes_received = swarm_->world().bytes_received(i);
      s.relayed_bytes = b.relayed_before + (swarm_->relayed(i) ? swarm_->relayed(i)->stats().forwarded_bytes : 0);
      r.relayed_bytes += s.relayed_bytes;
      s.traffic_gb_per_hour = s.up_s > 0 ? static_cast<double>(s.bytes_sent + s.bytes_received) / 1e9 / (s.up_s / 3600) : 0;
      s.samples = b.samples;
      s.vcu = coins_.balance(i);
      s.state_downloads = b.downloads;
      s.update_downloads = b.update_downloads;
      s.step = p ? p->step() : b.last_step;
      s.lineage = p ? p->lineage() : 0;
      s.steps_eligible = b.eligible;
      s.steps_left_out = b.left_out;
      if (b.eligible > 0)
        r.max_left_out_share = std::max(r.max_left_out_share, static_cast<double>(b.left_out) / static_cast<double>(b.eligible));
      s.up_at_end = p != nullptr;
      s.training_at_end = p && p->phase() == CollaborativePeer::Phase::Training;
      if (p) r.pending_check += p->accumulated() + (p->in_round() ? p->contributed() : 0);
      if (s.computes) {
        ++computing;
        r.mean_utilisation += s.utilisation;
        r.mean_idle_s += s.idle_s;
        r.mean_averaging_s += s.averaging_s;
        r.mean_wait_s += s.wait_s;
        r.mean_traffic_gb_per_hour += s.traffic_gb_per_hour;
      }
      r.peers.push_back(std::move(s));
    }
    if (computing > 0) {
      const double c = static_cast<double>(computing);
      r.mean_utilisation /= c, r.mean_idle_s /= c, r.mean_averaging_s /= c, r.mean_wait_s /= c, r.mean_traffic_gb_per_hour /= c;
    }
    r.events = swarm_->engine().events_processed();
    return r;
  }

  const scenarios::Scenario& sc_;
  scenarios::TrainingSpec t_;
  scenarios::Coordination coordination_ = scenarios::Coordination::Oracle;
  std::unique_ptr<SimSwarm> swarm_;
  std::vector<PeerBooks> books_;
  core::training::SampleLedger ledger_;
  core::training::CoinLedger coins_;
  double vcu_reference_sps_ = 0;
  std::uint64_t global_step_ = 0;
  std::vector<double> step_times_;
  std::size_t in_round_ = 0;  // peers inside a round
  Seconds busy_since_ = 0, averaging_s_ = 0;
  std::uint64_t downloads_ = 0, update_downloads_ = 0, bucket_samples_ = 0, rounds_ = 0;
  std::unordered_set<std::uint64_t> rounds_seen_;  // only counted
  std::uint64_t tracked_step_ = 0;
  std::set<PeerId> eligible_, members_;
  std::vector<TrainingTimePoint> series_;
};

}  // namespace

TrainingRunResult run_training(const scenarios::Scenario& scenario, const TrainingRunConfig& config) {
  TrainingRun run(scenario, config);
  return run.run();
}

}  // namespace swarmlab::sim
