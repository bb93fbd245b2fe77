#include "core/training/collaborative_peer.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/matchmaking/group_plan.h"

namespace swarmlab::core::training {

namespace {

// A sender that has not computed a sample since its last step still sends (the group's plan
// expects its parts), with a weight too small to move the average.
constexpr double kEmptyContributionWeight = 1e-9;

progress::ProgressConfig progress_config(const CollaborativePeerConfig& c) {
  progress::ProgressConfig p;
  p.run = c.run;
  p.target_batch = static_cast<double>(c.target_batch);
  p.expiration = c.progress_expiration;
  p.refresh_period = c.progress_expiration / 2;
  p.client_mode = c.capacity.client_mode;
  return p;
}

}  // namespace

CollaborativePeer::CollaborativePeer(Environment& env, CollaborativePeerConfig config, CollaborativePeerEvents events)
    : env_(env), config_(std::move(config)), events_(std::move(events)) {
  if (config_.target_batch == 0) throw std::invalid_argument("collaborative peer: target batch must be positive");
  if (config_.parameters == 0) throw std::invalid_argument("collaborative peer: parameter count must be positive");
  dht_ = std::make_unique<dht::DhtNode>(env_, dht::NodeId::random(env_.rng()), config_.dht);
  progress_ = std::make_unique<progress::ProgressTracker>(env_, *dht_, progress_config(config_));
  config_.matchmaking.client_mode = config_.capacity.client_mode;
  matchmaker_ = std::make_unique<matchmaking::Matchmaker>(env_, *dht_, config_.matchmaking);
  set_capacity(config_.capacity);
  averaging_ = std::make_unique<averaging::AveragingService>(env_);
  state_ = std::make_unique<StateService>(env_, config_.state, [this] { return step_; });
  if (trains())
    trainer_ = std::make_unique<Trainer>(env_, config_.trainer, [this](std::uint64_t n) { on_samples(n); });

  dht::DhtNode* d = dht_.get();
  matchmaking::Matchmaker* m = matchmaker_.get();
  averaging::AveragingService* a = averaging_.get();
  StateService* s = state_.get();
  mux_.add(Service::Dht, [d](PeerId from, Message msg) { d->handle(from, msg.bytes); }, [d](PeerId p) { d->link_failed(p); });
  mux_.add(Service::Matchmaking, [m](PeerId from, Message msg) { m->handle(from, msg.bytes); },
           [m](PeerId p) { m->link_failed(p); });
  mux_.add(Service::Averaging, [a](PeerId from, Message msg) { a->handle(from, msg); }, [a](PeerId p) { a->on_link_failure(p); });
  mux_.add(Service::State, [s](PeerId from, Message msg) { s->handle(from, msg); }, [s](PeerId p) { s->on_link_failure(p); });
  env_.set_sink(&mux_);
}

CollaborativePeer::~CollaborativePeer() {
  *alive_ = false;
  env_.cancel(fetch_timer_);
  env_.cancel(ready_timer_);
  env_.set_sink(nullptr);
}

void CollaborativePeer::start(std::vector<PeerId> bootstrap) {
  dht_->bootstrap(std::move(bootstrap), [this, alive = alive_](bool) {
    if (!*alive) return;
    report();
    fetch();
  });
}

void CollaborativePeer::set_capacity(const planner::PeerCapacity& capacity) {
  config_.capacity.download_bps = capacity.download_bps;
  config_.capacity.upload_bps = capacity.upload_bps;
  matchmaker_->set_gathered(matchmaking::encode_capacity(config_.capacity));
}

// ---------------------------------------------------------------------------------------------
// Progress

void CollaborativePeer::on_samples(std::uint64_t n) {
  if (events_.computed) events_.computed(n);
  if (env_.now() - last_report_ >= config_.report_period) report();
}

void CollaborativePeer::report() {
  progress::LocalProgress local;
  local.step = step_;
  if (trainer_ && phase_ == Phase::Training) {
    local.samples = trainer_->accumulated();
    local.samples_per_s = config_.capacity.compute_sps;
  }
  last_report_ = env_.now();
  progress_->report(local);
}

void CollaborativePeer::schedule_fetch(Seconds delay) {
  env_.cancel(fetch_timer_);
  fetch_timer_ = env_.schedule(delay, [this] {
    fetch_timer_ = 0;
    fetch();
  });
}

void CollaborativePeer::fetch() {
  if (fetch_in_flight_) return;
  fetch_in_flight_ = true;
  progress_->fetch([this, alive = alive_](const progress::GlobalProgress& g) {
    if (!*alive) return;
    fetch_in_flight_ = false;
    on_progress(g);
  });
}

void CollaborativePeer::on_progress(const progress::GlobalProgress& g) {
  known_global_step_ = std::max(known_global_step_, g.global_step);
  // Look again when matchmaking should start (ETA = matchmaking time), then ever more often as the
  // step nears (half the ETA, as hivemind does), within bounds.
  const Seconds lead = config_.matchmaking.min_matchmaking_time;
  const Seconds wanted = !std::isfinite(g.eta_s) ? config_.max_fetch_period : g.eta_s > 2 * lead ? g.eta_s - lead : g.eta_s / 2;
  const Seconds next = std::clamp(wanted, config_.min_fetch_period, config_.max_fetch_period);
  const bool behind = step_ + 1 < g.global_step;  // more than one step: DPU's staleness is allowed
  if (phase_ == Phase::Joining) {
    if (behind) return start_sync(g);
    start_training();
  } else if (phase_ == Phase::Training && behind && !in_round_) {
    if (trainer_) {
      const std::uint64_t stale = trainer_->take();
      if (stale && events_.discarded) events_.discarded(stale);
    }
    if (matchmaker_->looking()) matchmaker_->cancel();
    return start_sync(g);
  } else if (phase_ == Phase::Training) {
    maybe_look_for_group(g);
  }
  if (phase_ != Phase::Syncing) schedule_fetch(next);
}

// ---------------------------------------------------------------------------------------------
// State download

void CollaborativePeer::start_sync(const progress::GlobalProgress& g) {
  phase_ = Phase::Syncing;
  if (trainer_) trainer_->pause();
  std::vector<PeerId> up_to_date;
  for (const auto& r : progress_->others())
    if (r.step == g.global_step && !r.client_mode && r.peer != env_.self()) up_to_date.push_back(r.peer);
  if (up_to_date.empty()) {  // nobody to ask yet: read the records again
    phase_ = Phase::Joining;
    return schedule_fetch(1.0);
  }
  const PeerId provider = up_to_date[env_.rng().below(up_to_date.size())];
  if (events_.sync_started) events_.sync_started(provider);
  state_->download(provider, [this, alive = alive_](bool ok, std::uint64_t step) {
    if (!*alive) return;
    if (events_.sync_finished) events_.sync_finished(ok, step);
    if (ok) step_ = std::max(step_, step);
    // Check again: the collaboration may have moved on during the download.
    phase_ = Phase::Joining;
    report();
    schedule_fetch(ok ? 0 : 1.0);
  });
}

void CollaborativePeer::start_training() {
  phase_ = Phase::Training;
  report();
  if (trainer_ && !(in_round_ && !config_.dpu)) trainer_->resume();
}

// ---------------------------------------------------------------------------------------------
// Groups and rounds

void CollaborativePeer::maybe_look_for_group(const progress::GlobalProgress& g) {
  if (in_round_ || matchmaker_->looking()) return;
  if (!progress_->should_start_matchmaking(g.now, config_.matchmaking.min_matchmaking_time)) return;
  matchmaker_->look_for_group(
      [this, alive = alive_](std::optional<matchmaking::Group> group) {
        if (!*alive) return;
        on_group(std::move(group));
      },
      config_.group_timeout);
}

void CollaborativePeer::on_group(std::optional<matchmaking::Group> group) {
  // No group, or one without a gradient to average (only auxiliary peers met): look again.
  if (!group || !roles_for(*group)) return schedule_fetch(config_.min_fetch_period);
  begin_round_when_ready(*group);
}

// The group may form before the batch is complete: each member starts its part once its own
// estimate says the collaboration has the target batch (or someone already took the step).
void CollaborativePeer::begin_round_when_ready(const matchmaking::Group& group) {
  in_round_ = true;  // no new search and no state download while this group waits
  round_step_ = std::max(step_, known_global_step_) + 1;
  wait_for_batch(group, env_.now() + config_.group_timeout);
}

void CollaborativePeer::wait_for_batch(const matchmaking::Group& group, Seconds deadline) {
  const progress::GlobalProgress g = progress_->estimate(env_.now());
  // Ready: the batch is complete, or others already took this step (we are late), or nobody
  // trains (nothing will change), or the group has waited long enough.
  if (g.estimated_samples >= static_cast<double>(config_.target_batch) || g.global_step >= round_step_ ||
      !std::isfinite(g.eta_s) || env_.now() >= deadline)
    return begin_round(group);
  ready_timer_ = env_.schedule(std::max(g.eta_s, 1e-3), [this, group, deadline] {
    ready_timer_ = 0;
    wait_for_batch(group, deadline);
  });
}

const averaging::RoleAssignment* CollaborativePeer::roles_for(const matchmaking::Group& group) {
  std::vector<std::uint8_t> key;
  for (const auto& m : group.members) {
    key.push_back(m.client_mode ? 1 : 0);
    key.insert(key.end(), m.gathered.begin(), m.gathered.end());
  }
  auto it = roles_cache_.find(key);
  if (it == roles_cache_.end()) {
    planner::PlannerInput input = matchmaking::group_capacities(group);
    bool any_sender = false;
    for (const auto& c : input.peers) any_sender |= c.compute_sps > 0;
    std::optional<averaging::RoleAssignment> roles;
    if (any_sender) {
      input.target_batch = static_cast<double>(config_.target_batch);
      input.gradient_bits = 8.0 * static_cast<double>(codec::encoded_size(config_.codec, config_.parameters));
      roles = averaging::assign_roles(config_.strategy, input);  // PS: it picks the server itself
    }
    it = roles_cache_.emplace(std::move(key), std::move(roles)).first;
  }
  return it->second ? &*it->second : nullptr;
}

void CollaborativePeer::begin_round(const matchmaking::Group& group) {
  averaging::RoundPlan plan = matchmaking::plan_for_group(group, *roles_for(group), config_.parameters, config_.codec,
                                                          config_.part_bytes);
  const auto me = plan.index_of(env_.self());
  if (!me) {  // neither sends nor reduces in this group: nothing to average, the step still lands
    in_round_ = false;
    step_ = round_step_;
    report();
    return schedule_fetch(0);
  }
  contributed_ = 0;
  if (plan.sends(*me)) {
    if (trainer_) contributed_ = trainer_->take();
    plan.weights[*me] = contributed_ > 0 ? static_cast<double>(contributed_) : kEmptyContributionWeight;
  }
  if (trainer_ && !config_.dpu) trainer_->pause();
  if (events_.round_started) events_.round_started(plan, contributed_);
  averaging_->start_round(std::move(plan), {}, config_.timeouts,
                          [this, alive = alive_](const averaging::RoundOutcome& o) {
                            if (!*alive) return;
                            on_round_done(o);
                          });
}

void CollaborativePeer::on_round_done(const averaging::RoundOutcome& outcome) {
  in_round_ = false;
  step_ = std::max(step_, round_step_);
  const std::uint64_t contributed = contributed_;
  contributed_ = 0;
  if (trainer_ && phase_ == Phase::Training) trainer_->resume();
  report();
  if (events_.round_finished) events_.round_finished(outcome, contributed, step_);
  schedule_fetch(0);
}

}  // namespace swarmlab::core::training
