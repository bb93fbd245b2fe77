#include "sim/training_experiment.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/averaging/averaging_service.h"
#include "core/service_mux.h"
#include "core/training/state_service.h"
#include "core/training/trainer.h"
#include "sim/backend.h"
#include "sim/collaborative_training.h"
#include "sim/engine.h"
#include "sim/sim_world.h"

namespace swarmlab::sim {

using core::averaging::AveragingService;
using core::averaging::RoundOutcome;
using core::training::StateService;
using core::training::Trainer;
using scenarios::TrainingMode;

namespace {

enum class Phase { Down, Syncing, Training };

// One peer as the driver sees it, across restarts.
struct PeerState {
  Phase phase = Phase::Down;
  std::unique_ptr<core::ServiceMux> mux;
  std::unique_ptr<AveragingService> averaging;
  std::unique_ptr<StateService> state;
  std::unique_ptr<Trainer> trainer;
  std::uint64_t epoch = 0;          // bumped when it goes down: voids replayed finishes
  Seconds up_since = 0, up_total = 0;
  Seconds compute_before = 0;       // compute time of earlier incarnations
  Seconds sync_since = 0, sync_total = 0;
  bool waiting = false;             // DiLoCo: quota reached
  Seconds wait_since = 0, wait_total = 0;
  Seconds averaging_total = 0;
  bool in_round = false;
  std::uint64_t contributed = 0;    // samples in the round in flight
  std::uint64_t samples = 0;
  std::uint64_t downloads = 0;
  std::uint64_t served = 0;         // downloads this peer has been asked to serve (load spreading)
  std::uint64_t step = 0;           // survives restarts only through a download
  std::uint64_t replay_sent = 0, replay_received = 0;
  std::uint64_t received = 0;
};

// A simulated round of a given membership, kept to replay identical later ones.
struct CachedRound {
  std::vector<Seconds> finish;  // per member, after the start
  std::vector<std::uint64_t> sent, received;
};

class TrainingRun {
 public:
  TrainingRun(const scenarios::Scenario& sc, const TrainingRunConfig& cfg) : sc_(sc), cfg_(cfg), t_(sc.training) {
    if (cfg.duration_s) t_.duration_s = *cfg.duration_s;
    if (cfg.dpu) t_.dpu = *cfg.dpu;
    network_ = make_scenario_network(sc, cfg.transport, cfg.backend, engine_);
    world_ = std::make_unique<SimWorld>(engine_, *network_, sim_peers(sc), sc.seed);
    world_->set_delivery_observer(
        [this](PeerId, PeerId to, const core::Message& m) { peers_[to].received += m.wire_size(); });
    peers_.resize(n());
    codec_ = codec_for(sc.workload.wire_precision);
    strategy_ = strategy_for(sc.averaging.strategy);
    full_input_ = planner_input(sc, cfg.transport);
    timeouts_ = scenario_timeouts(sc, cfg.timeouts);
    state_bytes_ = static_cast<std::uint64_t>(std::llround(t_.state_bytes_per_parameter * static_cast<double>(sc.workload.parameters)));
    replay_ = cfg.replay_identical_rounds && sc.bandwidth.events.empty();
  }

  TrainingRunResult run() {
    for (PeerId i = 0; i < n(); ++i) {
      if (sc_.peer_up(i, 0)) bring_up(i);
      else world_->set_down(i, SimWorld::Departure::Silent);
    }
    schedule_availability(sc_, engine_, [this](PeerId i) { bring_up(i); }, [this](PeerId i) { take_down(i); });
    for (double t = t_.metrics_interval_s; t <= t_.duration_s + 1e-9; t += t_.metrics_interval_s)
      engine_.at(t, [this] { sample_series(); });
    engine_.run_until(t_.duration_s);
    return finish();
  }

 private:
  PeerId n() const { return static_cast<PeerId>(sc_.peers.size()); }
  bool computes(PeerId i) const { return sc_.peers[i].compute_sps > 0; }
  bool diloco() const { return t_.mode == TrainingMode::Diloco; }
  // Averaging in sequence with computation: no DPU, and always for DiLoCo (the outer step needs it).
  bool sequential() const { return diloco() || !t_.dpu; }

  // ------------------------------------------------------------------------------------------
  // Peers coming and going

  void boot(PeerId i) {
    PeerState& p = peers_[i];
    core::Environment& env = world_->env(i);
    p.averaging = std::make_unique<AveragingService>(env);
    core::training::StateConfig sc;
    sc.state_bytes = state_bytes_;
    sc.chunk_bytes = t_.state_chunk_bytes;
    p.state = std::make_unique<StateService>(env, sc, [this, i] { return peers_[i].step; });
    core::training::TrainerConfig tc;
    tc.micro_batch = t_.micro_batch;
    if (diloco()) tc.quota = t_.local_steps * t_.local_batch;
    p.trainer = std::make_unique<Trainer>(env, tc, [this, i](std::uint64_t s) { on_samples(i, s); });
    p.mux = std::make_unique<core::ServiceMux>();
    AveragingService* avg = p.averaging.get();
    StateService* st = p.state.get();
    p.mux->add(core::Service::Averaging, [avg](PeerId from, core::Message m) { avg->handle(from, m); },
               [avg](PeerId peer) { avg->on_link_failure(peer); });
    p.mux->add(core::Service::State, [st](PeerId from, core::Message m) { st->handle(from, m); },
               [st](PeerId peer) { st->on_link_failure(peer); });
    env.set_sink(p.mux.get());
  }

  void bring_up(PeerId i) {
    PeerState& p = peers_[i];
    if (p.phase != Phase::Down) return;
    if (!world_->is_up(i)) world_->set_up(i);
    boot(i);
    p.up_since = engine_.now();
    p.step = 0;  // a restarted process has lost its state
    // docs/dedloc.md §1: a peer more than one step behind downloads the state first.
    if (computes(i) && p.step + 1 < global_step_) start_sync(i);
    else start_training(i);
  }

  void take_down(PeerId i) {
    PeerState& p = peers_[i];
    if (p.phase == Phase::Down) return;
    const Seconds now = engine_.now();
    p.up_total += now - p.up_since;
    p.compute_before += p.trainer->compute_time();
    if (p.phase == Phase::Syncing) p.sync_total += now - p.sync_since;
    if (p.waiting) p.wait_total += now - p.wait_since, p.waiting = false;
    ledger_.on_lost(p.trainer->accumulated());
    p.phase = Phase::Down;
    ++p.epoch;
    world_->set_down(i, SimWorld::Departure::Crash);
    // Its services die with the process (after set_down, so they cancel nothing twice).
    p.trainer.reset();
    p.averaging.reset();
    p.state.reset();
    if (p.in_round) {
      round_clean_ = false;
      ledger_.on_lost(p.contributed);
      p.contributed = 0;
      p.in_round = false;
      member_done();
    }
  }


  // ------------------------------------------------------------------------------------------
  // State download

  void start_sync(PeerId i) {
    PeerState& p = peers_[i];
    if (p.phase != Phase::Syncing) p.sync_since = engine_.now();
    p.phase = Phase::Syncing;
    round_clean_ = false;
    // An up-to-date peer that has served the fewest downloads (lowest index on ties).
    std::optional<PeerId> provider;
    for (PeerId j = 0; j < n(); ++j)
      if (j != i && peers_[j].phase == Phase::Training && computes(j) && peers_[j].step == global_step_ &&
          (!provider || peers_[j].served < peers_[*provider].served))
        provider = j;
    const std::uint64_t epoch = p.epoch;
    if (!provider) {
      engine_.after(1.0, [this, i, epoch] { if (peers_[i].epoch == epoch) start_sync(i); });
      return;
    }
    ++peers_[*provider].served;
    p.state->download(*provider, [this, i, epoch](bool ok, std::uint64_t step) {
      PeerState& q = peers_[i];
      if (q.epoch != epoch || q.phase != Phase::Syncing) return;
      if (!ok) return start_sync(i);
      ++q.downloads;
      ++downloads_;
      q.step = step;
      if (q.step + 1 < global_step_) return start_sync(i);  // fell behind again while downloading
      q.sync_total += engine_.now() - q.sync_since;
      start_training(i);
    });
  }

  void start_training(PeerId i) {
    PeerState& p = peers_[i];
    p.phase = Phase::Training;
    if (computes(i)) p.trainer->resume();
  }

  // ------------------------------------------------------------------------------------------
  // Steps

  void on_samples(PeerId i, std::uint64_t samples) {
    PeerState& p = peers_[i];
    ledger_.on_computed(samples);
    p.samples += samples;
    bucket_samples_ += samples;
    if (diloco() && p.trainer->quota_reached()) {
      p.waiting = true;
      p.wait_since = engine_.now();
    }
    maybe_start_round();
  }

  bool batch_ready() const {
    if (diloco()) {
      bool any = false;
      for (PeerId i = 0; i < n(); ++i)
        if (peers_[i].phase == Phase::Training && computes(i)) {
          if (!peers_[i].trainer->quota_reached()) return false;
          any = true;
        }
      return any;
    }
    std::uint64_t total = 0;
    for (PeerId i = 0; i < n(); ++i)
      if (peers_[i].phase == Phase::Training && computes(i)) total += peers_[i].trainer->accumulated();
    return total >= sc_.workload.target_batch;
  }

  void maybe_start_round() {
    // With DPU the background step of the previous round must finish before the next one begins.
    if (round_in_flight_ || !batch_ready()) return;
    start_round();
  }

  void start_round() {
    std::vector<bool> members(n(), false);
    std::vector<PeerId> list;
    bool any_samples = false;
    for (PeerId i = 0; i < n(); ++i)
      if (peers_[i].phase == Phase::Training) {
        members[i] = true;
        list.push_back(i);
      }
    for (PeerId i : list) any_samples |= computes(i) && peers_[i].trainer->accumulated() > 0;
    if (!any_samples) return;
    for (PeerId i : list) {
      PeerState& p = peers_[i];
      if (!computes(i)) continue;
      p.contributed = p.trainer->take();
      if (sequential()) p.trainer->pause();
      if (p.waiting) p.wait_total += engine_.now() - p.wait_since, p.waiting = false;
    }
    core::averaging::RoundPlan plan = core::averaging::make_round_plan(
        round_id_++, roles_for(members), sc_.workload.parameters, codec_, sc_.averaging.part_bytes);
    // Contributions are weighted by the samples behind them (docs/dedloc.md §1).
    for (std::size_t m = 0; m < plan.size(); ++m) plan.weights[m] = static_cast<double>(peers_[plan.members[m]].contributed);
    round_in_flight_ = true;
    round_started_ = engine_.now();
    outstanding_ = plan.size();
    round_members_ = plan.members;
    round_clean_ = true;
    for (PeerId p : plan.members) peers_[p].in_round = true;
    for (PeerId i = 0; i < n(); ++i)
      if (peers_[i].phase == Phase::Syncing) round_clean_ = false;

    const auto cached = cache_.find(members);
    if (replay_ && round_clean_ && cached != cache_.end()) {
      ++replayed_;
      replaying_ = true;
      for (std::size_t m = 0; m < plan.size(); ++m) {
        const PeerId p = plan.members[m];
        peers_[p].replay_sent += cached->second.sent[m];
        peers_[p].replay_received += cached->second.received[m];
        engine_.after(cached->second.finish[m], [this, p, epoch = peers_[p].epoch] {
          if (peers_[p].epoch == epoch) member_finished(p);
        });
      }
      return;
    }
    ++simulated_;
    replaying_ = false;
    cache_key_ = members;
    finish_offsets_.assign(plan.size(), 0);
    sent_before_.clear();
    received_before_.clear();
    for (PeerId p : plan.members) {
      sent_before_.push_back(world_->bytes_sent(p));
      received_before_.push_back(peers_[p].received);
    }
    for (std::size_t m = 0; m < plan.size(); ++m) {
      const PeerId p = plan.members[m];
      peers_[p].averaging->start_round(plan, {}, timeouts_, [this, p, m](const RoundOutcome& out) {
        if (!out.completed) round_clean_ = false;
        finish_offsets_[m] = engine_.now() - round_started_;
        member_finished(p);
      });
    }
  }

  // A member is done with the round: it applies the step (its own, for a pure reducer nothing).
  void member_finished(PeerId i) {
    PeerState& p = peers_[i];
    if (!p.in_round) return;
    p.in_round = false;
    p.averaging_total += engine_.now() - round_started_;
    ledger_.on_stepped(p.contributed);
    p.contributed = 0;
    p.step = global_step_ + 1;
    if (sequential() && computes(i) && p.phase == Phase::Training) p.trainer->resume();
    member_done();
  }

  void member_done() {
    if (--outstanding_ > 0) return;
    ++global_step_;
    step_times_.push_back(engine_.now());
    averaging_s_ += engine_.now() - round_started_;
    round_in_flight_ = false;
    if (!replaying_ && round_clean_ && replay_) {
      CachedRound c;
      c.finish = finish_offsets_;
      for (std::size_t m = 0; m < round_members_.size(); ++m) {
        c.sent.push_back(world_->bytes_sent(round_members_[m]) - sent_before_[m]);
        c.received.push_back(peers_[round_members_[m]].received - received_before_[m]);
      }
      cache_.emplace(cache_key_, std::move(c));
    }
    // Not inside a round's callback; the next batch may already be complete (DPU).
    engine_.after(0, [this] { maybe_start_round(); });
  }

  // Roles for a membership, re-solved only when it changes.
  const core::averaging::RoleAssignment& roles_for(const std::vector<bool>& live) {
    if (auto it = roles_cache_.find(live); it != roles_cache_.end()) return it->second;
    return roles_cache_
        .emplace(live, core::averaging::assign_roles_among(strategy_, full_input_, live, sc_.averaging.ps_peer))
        .first->second;
  }

  // ------------------------------------------------------------------------------------------
  // Metrics

  void sample_series() {
    TrainingTimePoint pt;
    pt.t_s = engine_.now();
    pt.samples_per_s = static_cast<double>(bucket_samples_) / t_.metrics_interval_s;
    for (PeerId i = 0; i < n(); ++i) pt.active_peers += computes(i) && peers_[i].phase == Phase::Training;
    pt.steps = global_step_;
    series_.push_back(pt);
    bucket_samples_ = 0;
  }

  TrainingRunResult finish() {
    const Seconds end = t_.duration_s;
    TrainingRunResult r;
    r.scenario = sc_.name;
    r.mode = std::string(scenarios::to_string(t_.mode));
    r.dpu = t_.dpu && !diloco();
    r.duration_s = end;
    r.steps = global_step_;
    r.steps_per_hour = static_cast<double>(global_step_) / (end / 3600.0);
    r.local_steps_per_step = diloco() ? t_.local_steps : 1;
    r.step_times = step_times_;
    r.averaging_s = averaging_s_ + (round_in_flight_ ? end - round_started_ : 0);
    r.mean_round_s = global_step_ ? averaging_s_ / static_cast<double>(global_step_) : 0;
    r.rounds_simulated = simulated_;
    r.rounds_replayed = replayed_;
    r.ledger = ledger_;
    r.series = series_;
    r.state_downloads = downloads_;
    r.state_bytes = state_bytes_;
    r.gradient_bytes = core::codec::encoded_size(codec_, sc_.workload.parameters);
    for (PeerId i = 0; i < n(); ++i) {
      const PeerState& p = peers_[i];
      PeerTrainingStats s;
      s.name = sc_.peers[i].name;
      s.computes = computes(i);
      const bool up = p.phase != Phase::Down;
      s.up_s = p.up_total + (up ? end - p.up_since : 0);
      s.compute_s = p.compute_before + (up ? p.trainer->compute_time() : 0);
      s.averaging_s = p.averaging_total + (p.in_round ? end - round_started_ : 0);
      s.wait_s = p.wait_total + (p.waiting ? end - p.wait_since : 0);
      s.sync_s = p.sync_total + (p.phase == Phase::Syncing ? end - p.sync_since : 0);
      s.bytes_sent = world_->bytes_sent(i) + p.replay_sent;
      s.bytes_received = p.received + p.replay_received;
      s.samples = p.samples;
      s.state_downloads = p.downloads;
      s.step = p.step;
      s.up_at_end = up;
      s.training_at_end = p.phase == Phase::Training;
      if (up && computes(i)) r.pending_check += p.trainer->accumulated();
      if (p.in_round) r.pending_check += p.contributed;
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
  std::vector<PeerState> peers_;
  core::codec::Codec codec_ = core::codec::Codec::Fp32;
  core::averaging::Strategy strategy_ = core::averaging::Strategy::Planned;
  core::planner::PlannerInput full_input_;
  core::averaging::Timeouts timeouts_;
  std::uint64_t state_bytes_ = 0;
  bool replay_ = true;
  std::map<std::vector<bool>, core::averaging::RoleAssignment> roles_cache_;
  std::map<std::vector<bool>, CachedRound> cache_;
  core::training::SampleLedger ledger_;

  std::uint64_t global_step_ = 0;
  std::uint64_t round_id_ = 0;
  bool round_in_flight_ = false;
  bool replaying_ = false;
  bool round_clean_ = true;
  Seconds round_started_ = 0;
  std::size_t outstanding_ = 0;
  std::vector<PeerId> round_members_;
  std::vector<bool> cache_key_;
  std::vector<Seconds> finish_offsets_;
  std::vector<std::uint64_t> sent_before_, received_before_;
  std::vector<double> step_times_;
  Seconds averaging_s_ = 0;
  std::uint64_t simulated_ = 0, replayed_ = 0, downloads_ = 0;
  std::uint64_t bucket_samples_ = 0;
  std::vector<TrainingTimePoint> series_;
};

}  // namespace

void summarise_peers(TrainingRunResult& r) {
  std::size_t computing = 0;
  r.mean_utilisation = r.mean_idle_s = r.mean_averaging_s = r.mean_wait_s = r.mean_traffic_gb_per_hour = 0;
  for (PeerTrainingStats& s : r.peers) {
    s.idle_s = std::max(0.0, s.up_s - s.compute_s);
    s.utilisation = s.computes && s.up_s > 0 ? s.compute_s / s.up_s : 0;
    s.traffic_gb_per_hour = s.up_s > 0 ? static_cast<double>(s.bytes_sent + s.bytes_received) / 1e9 / (s.up_s / 3600) : 0;
    if (!s.computes) continue;
    ++computing;
    r.mean_utilisation += s.utilisation;
    r.mean_idle_s += s.idle_s;
    r.mean_averaging_s += s.averaging_s;
    r.mean_wait_s += s.wait_s;
    r.mean_traffic_gb_per_hour += s.traffic_gb_per_hour;
  }
  if (computing == 0) return;
  const double c = static_cast<double>(computing);
  r.mean_utilisation /= c, r.mean_idle_s /= c, r.mean_averaging_s /= c, r.mean_wait_s /= c, r.mean_traffic_gb_per_hour /= c;
}

TrainingRunResult run_training(const scenarios::Scenario& scenario, const TrainingRunConfig& config) {
  if (config.coordination.value_or(scenario.training.coordination) == scenarios::Coordination::Dht)
    return run_collaborative_training(scenario, config);
  TrainingRun run(scenario, config);
  return run.run();
}

}  // namespace swarmlab::sim
