#include "core/training/collaborative_peer.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/allreduce/halving_doubling_averager.h"
#include "core/averaging/averaging_service.h"
#include "core/matchmaking/announcement_codec.h"
#include "core/matchmaking/group_plan.h"
#include "core/training/state_cohort.h"

namespace swarmlab::core::training {

namespace {

// A sender that has not computed a sample since its last step still sends (the group's plan
// expects its parts), with a weight too small to move the average.
constexpr double kEmptyContributionWeight = 1e-9;

// How many steps back a pure reducer looks for the newest step a peer holding a state reached.
constexpr std::uint64_t kReducerStepLookback = 4;

}  // namespace

progress::StepTarget CollaborativePeerConfig::step_target() const {
  progress::StepTarget t;
  if (quota > 0) t.per_peer_quota = quota;
  else t.batch = static_cast<double>(target_batch);
  return t;
}

CollaborativePeer::CollaborativePeer(Environment& env, CollaborativePeerConfig config, PeerParts parts,
                                     CollaborativePeerEvents events)
    : env_(env),
      config_(std::move(config)),
      events_(std::move(events)),
      coordinator_(std::move(parts.coordinator)),
      learner_(std::move(parts.learner)),
      averager_(std::move(parts.averager)),
      timeouts_(config_.timeouts) {
  mux_ = std::make_unique<ServiceMux>([this] { return env_.now(); });
  if (!coordinator_ || !learner_) throw std::invalid_argument("collaborative peer: needs a coordinator and a learner");
  if (config_.target_batch == 0 && config_.quota == 0)
    throw std::invalid_argument("collaborative peer: target batch or quota must be positive");
  if (config_.dpu && config_.quota > 0)
    throw std::invalid_argument("collaborative peer: delayed parameter updates need a pooled target batch");
  if (learner_->parameter_count() == 0) throw std::invalid_argument("collaborative peer: the learner has no parameters");
  if (config_.clip && config_.strategy == averaging::Strategy::HalvingDoubling)
    throw std::invalid_argument("collaborative peer: CenteredClip needs strategy ar, ps or ours, not hd");
  // An honest sender is early by at most its parts of one round: never more than two whole fp32
  // vectors, whatever the configured budget says.
  PeerLimitsConfig limits = config_.limits;
  limits.max_held_bytes = std::max(limits.max_held_bytes, 8 * learner_->parameter_count() + (std::uint64_t{1} << 20));
  limits_ = std::make_unique<PeerLimits>(env_, limits);
  mux_->set_limits(limits_.get());
  if (!averager_) {
    if (config_.strategy == averaging::Strategy::HalvingDoubling)
      averager_ = std::make_unique<allreduce::HalvingDoublingAverager>(env_, limits_.get());
    else
      averager_ = std::make_unique<averaging::AveragingService>(env_, limits_.get(), config_.reduce_cost);
  }
  if (!config_.roles_cache) config_.roles_cache = std::make_shared<averaging::RolesCache>();
  if (!config_.group_inputs) config_.group_inputs = std::make_shared<GroupInputCache>();
  state_ = std::make_unique<StateService>(env_, config_.state, [this](const StateWanted& wanted) -> std::optional<StateSnapshot> {
    if (wanted.updates) return kept_updates(wanted.since_step, wanted.since_lineage);
    StateSnapshot snap;
    snap.step = step_;
    snap.lineage = lineage_;
    if (learner_->has_values()) snap.bytes = learner_->export_state();
    else snap.virtual_bytes = learner_->state_bytes();
    return snap;
  }, limits_.get());
  if (trains()) {
    TrainerConfig tc = config_.trainer;
    tc.quota = config_.quota;
    trainer_ = std::make_unique<Trainer>(*learner_, tc, [this](std::uint64_t n) { on_samples(n); });
  }
  set_capacity(config_.capacity);
  coordinator_->attach(*mux_);
  mux_->add(averager_->service(), *averager_);
  mux_->add(ServiceId::State, *state_);
  env_.set_sink(mux_.get());
}

CollaborativePeer::~CollaborativePeer() {
  *alive_ = false;
  env_.cancel(fetch_timer_);
  env_.cancel(ready_timer_);
  env_.set_sink(nullptr);
}

void CollaborativePeer::start(std::vector<PeerId> bootstrap) {
  last_read_at_ = env_.now();
  report();
  coordinator_->join(std::move(bootstrap), [this, alive = alive_](bool) {
    if (!*alive) return;
    report();
    fetch();
  });
}

void CollaborativePeer::leave() {
  left_ = true;
  if (coordinator_->looking()) coordinator_->cancel_search();
  if (trainer_) trainer_->pause();
}

void CollaborativePeer::set_capacity(const planner::PeerCapacity& capacity) {
  // A measured speed replaces the announced one; whether the peer trains at all does not change.
  if (trains() && capacity.compute_sps > 0) config_.capacity.compute_sps = capacity.compute_sps;
  config_.capacity.download_bps = capacity.download_bps;
  config_.capacity.upload_bps = capacity.upload_bps;
  announce();
}

void CollaborativePeer::announce() {
  coordinator_->set_announcement(matchmaking::encode_announcement(
      {config_.capacity, holds_state() ? std::optional<std::uint64_t>(step_) : std::nullopt}));
}

// ---------------------------------------------------------------------------------------------
// Progress

void CollaborativePeer::on_samples(std::uint64_t n) {
  if (events_.computed) events_.computed(n);
  report();
  if (waiting_ && trainer_->quota_reached()) wait_for_step();
}

void CollaborativePeer::report() {
  progress::LocalProgress local;
  local.step = step_;
  local.lineage = lineage_;
  local.activity = phase_ == Phase::Joining   ? progress::Activity::Joining
                   : phase_ == Phase::Syncing ? progress::Activity::Syncing
                                              : progress::Activity::Training;
  if (trainer_ && phase_ == Phase::Training) {
    local.samples = trainer_->accumulated();
    // Once its quota is in, a peer adds nothing more to this step.
    local.samples_per_s = trainer_->quota_reached() ? 0 : config_.capacity.compute_sps;
  }
  coordinator_->report(local);
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
  coordinator_->fetch([this, alive = alive_, begun = rounds_begun_](const progress::GlobalProgress& g) {
    if (!*alive) return;
    fetch_in_flight_ = false;
    // A round began while this read was out: its answers predate the round, and replicas busy with
    // the round's traffic may not have answered at all (an auxiliary reducer at 256 peers read
    // nobody but itself and waited out the longest period). The read the round's end asked for,
    // which found this one in flight, happens now; during the round there is none.
    if (begun != rounds_begun_) {
      if (!averaging()) fetch();
      return;
    }
    on_progress(g);
  });
}

void CollaborativePeer::on_progress(const progress::GlobalProgress& g) {
  known_global_step_ = std::max(known_global_step_, g.global_step);
  // Look again when matchmaking should start (ETA = matchmaking time), then ever more often as the
  // step nears (half the ETA, as hivemind does), within bounds.
  const Seconds lead = timeouts_.matchmaking_time();
  const Seconds wanted = !std::isfinite(g.eta_s) ? config_.max_fetch_period : g.eta_s > 2 * lead ? g.eta_s - lead : g.eta_s / 2;
  Seconds next = std::clamp(wanted, config_.min_fetch_period, config_.max_fetch_period);
  // A view that grew since the last read gives an ETA from part of the collaboration's rate, so too
  // late: peers that start together publish their first records over the first moments, and one
  // that read early would wait out that ETA while the others' searches began. Until the view stops
  // growing, the next read comes no later than the last interval (docs/interpretations.md §30).
  if (g.peers > seen_peers_) next = std::min(next, std::max(config_.min_fetch_period, env_.now() - last_read_at_));
  seen_peers_ = g.peers;
  last_read_at_ = env_.now();
  const bool behind = step_ + 1 < g.global_step;  // more than one step: DPU's staleness is allowed
  // One step behind and in no round: matchmaking left it out of the last round (a round in
  // progress, or a group waiting for its step, sets in_round_). Its record would read "still
  // finishing the last round, needs its whole quota after it", and the next group it joined waited
  // for it until the group timeout (docs/interpretations.md §24).
  const bool missed_round = !in_round_ && step_ + 1 == g.global_step;
  // A peer that trains on the collaboration's parameters must load the step it missed: averaging
  // its next gradient into parameters nobody else holds would set it apart for good.
  const bool must_load = missed_round && config_.sync_state && trainer_;
  if (phase_ == Phase::Joining) {
    // A newcomer's parameters are not stale but old: any step it missed must be loaded, or it
    // would average with parameters nobody else holds (docs/interpretations.md §25). The step it
    // once saw counts: a later read that reached none of the peers ahead proves nothing.
    if (known_global_step_ > step_) {
      if (config_.sync_state) return start_sync(g);
      set_step(known_global_step_, lineage_);  // nothing to load: adopt the collaboration's step
    }
    start_training();
  } else if (phase_ == Phase::Syncing && !downloading_) {
    return start_sync(g);  // nobody could serve the state last time: look again
  } else if (phase_ == Phase::Training && !in_round_ && (behind || must_load || diverged())) {
    discard_accumulated();
    if (coordinator_->looking()) coordinator_->cancel_search();
    if (!config_.sync_state) {
      set_step(g.global_step, lineage_);
      report();
    } else {
      return start_sync(g);
    }
  } else if (phase_ == Phase::Training && missed_round) {
    // It missed the last round and has no state to load (averaging only, or a pure reducer): it
    // takes the collaboration's step now, keeping what it computed.
    set_step(g.global_step, lineage_);
    report();
  }
  if (phase_ == Phase::Training) maybe_look_for_group(coordinator_->estimate(env_.now(), {}));
  // While its round runs a peer can act on nothing the records say, and every record says the
  // step is due, so reads would come at the shortest period; the round's end reads them at once.
  if (phase_ != Phase::Syncing && !averaging()) schedule_fetch(next);
}

// ---------------------------------------------------------------------------------------------
// State download

namespace {

// The holders other than `self` (Coordinator::peers_at may list it).
std::vector<StateHolder> others(std::span<const StateHolder> holders, PeerId self) {
  std::vector<StateHolder> out;
  std::copy_if(holders.begin(), holders.end(), std::back_inserter(out), [self](const StateHolder& h) { return h.peer != self; });
  return out;
}

// Holders of a state that is some step's, not one only a reducer's arithmetic left behind.
std::vector<StateHolder> with_state(std::vector<StateHolder> holders) {
  std::erase_if(holders, [](const StateHolder& h) { return h.lineage == kNoState; });
  return holders;
}

}  // namespace

bool CollaborativePeer::diverged() const {
  // Only a peer that trains needs the collaboration's parameters; a pure reducer has none.
  if (!config_.sync_state || !trainer_) return false;
  const std::span<const StateHolder> at = coordinator_->peers_at(step_);
  const PeerId self = env_.self();
  // Usually every holder with a state holds this peer's (read after every progress read, so decided
  // without copying the list; this peer itself may be listed, with its own).
  if (std::all_of(at.begin(), at.end(), [&](const StateHolder& h) {
        return h.peer == self || h.lineage == kNoState || h.lineage == lineage_;
      }))
    return false;
  std::vector<StateHolder> holders = with_state(others(at, self));
  holders.push_back({self, lineage_});
  // The senders of its last round hold this peer's state, though their records may not say so
  // yet: right after a round, a record of another group that took the same step can be the only
  // other one read, and every member of the larger group would load the smaller's state while
  // that one loads theirs (docs/interpretations.md §35). A partner's record at this step counts
  // as it says.
  if (!partners_.empty()) {
    std::vector<PeerId> read;  // sorted: at 256 peers a partner list has about 240 members
    for (const StateHolder& h : holders) read.push_back(h.peer);
    std::ranges::sort(read);
    for (const PeerId p : partners_)
      if (!std::ranges::binary_search(read, p)) holders.push_back({p, lineage_});
  }
  return consensus_lineage(holders) != lineage_;
}

std::uint64_t CollaborativePeer::next_round_step(const matchmaking::Group& group, const planner::PlannerInput& input) {
  const std::uint64_t reached = std::max(step_, known_global_step_);
  if (trainer_) return reached + 1;
  // A pure reducer holds no state, and its step only counts its rounds. Reducers serve groups back
  // to back, so one can finish a round for step s and join the group of members that missed that
  // round and are taking s themselves. Counting on, it would claim s + 1, a step no peer holding a
  // state reaches, and every peer that trains would then wait to load that step from nobody, for
  // good (a whole collaboration stalled so; docs/interpretations.md §26). So when none of the
  // group's senders was a sender of its last group, it takes the step after the newest one that a
  // peer holding a state has reached. (From one group to the next of a collaboration that moves
  // together, the senders' records of the last step may not be read yet: counting on is right.)
  std::vector<PeerId> senders;
  for (std::size_t i = 0; i < group.size() && i < input.peers.size(); ++i)
    if (input.peers[i].compute_sps > 0 && group.members[i].peer != env_.self()) senders.push_back(group.members[i].peer);
  const bool same_cohort = last_senders_.empty() || std::ranges::any_of(senders, [&](PeerId p) {
                             return std::ranges::find(last_senders_, p) != last_senders_.end();
                           });
  last_senders_ = std::move(senders);
  if (same_cohort) return reached + 1;
  const PeerId self = env_.self();
  for (std::uint64_t s = reached, looked = 0; looked < kReducerStepLookback && s > 0; --s, ++looked)
    if (!with_state(others(coordinator_->peers_at(s), self)).empty()) return s + 1;
  return reached + 1;
}

std::optional<PeerId> CollaborativePeer::state_provider(std::uint64_t step, const std::set<PeerId>& skip) {
  const PeerId self = env_.self();
  std::vector<StateHolder> candidates = others(coordinator_->peers_at(step), self);
  if (std::vector<StateHolder> settled = with_state(candidates); !settled.empty()) {
    const std::uint64_t lineage = *consensus_lineage(settled);
    std::erase_if(settled, [&](const StateHolder& h) { return h.lineage != lineage; });
    candidates = std::move(settled);
  } else if (step > 0 && !with_state(others(coordinator_->peers_at(step - 1), self)).empty()) {
    // Only reducers hold the step yet: they finish a round before its senders do. The senders'
    // state comes in a moment; a reducer's leftovers are no step's parameters.
    return std::nullopt;
  }
  std::erase_if(candidates, [&](const StateHolder& h) { return skip.count(h.peer) > 0; });
  if (candidates.empty()) return std::nullopt;
  return candidates[env_.rng().below(candidates.size())].peer;
}

void CollaborativePeer::discard_accumulated() {
  if (!trainer_) return;
  const std::uint64_t stale = trainer_->take();
  learner_->discard();
  if (stale && events_.discarded) events_.discarded(stale);
}

void CollaborativePeer::start_sync(const progress::GlobalProgress& g) {
  phase_ = Phase::Syncing;
  if (trainer_) trainer_->pause();
  report();
  // Ask a peer holding the state the collaboration settled on; a reducer's leftovers only when no
  // peer that trains has it (better an old state than none).
  const std::uint64_t target = std::max({g.global_step, known_global_step_, step_});
  // A peer holding an older step's state needs only the steps it missed, if the provider still
  // keeps them: a download that ends after the collaboration stepped again catches up this way
  // instead of starting over (docs/interpretations.md §26).
  // Only for as many steps as peers keep: asking for more (a newcomer holding the initial
  // parameters, long after step 0) is refused, a round trip lost.
  // A provider that loaded a state itself since keeps no chain back to this peer's step, and one
  // may be too busy to answer: the others are asked for updates before the whole state is.
  const bool wants_updates = step_ < target && target - step_ <= config_.kept_updates;
  std::optional<PeerId> provider = wants_updates ? state_provider(target, refused_updates_) : std::nullopt;
  const bool updates = provider.has_value();
  if (!provider) provider = state_provider(target);
  if (!provider) return schedule_fetch(config_.min_fetch_period);  // read the records again (on_progress)
  downloading_ = true;
  if (events_.sync_started) events_.sync_started(*provider);
  auto done = [this, updates, from = *provider, alive = alive_](bool ok, StateSnapshot got) {
    if (!*alive) return;
    downloading_ = false;
    if (ok && updates) ok = apply_updates(got);
    else if (ok && learner_->has_values()) {
      try {
        learner_->import_state(got.bytes);
      } catch (const StateError&) {
        ++rejected_states_;  // garbage or another model: ask someone else
        ok = false;
      }
    }
    if (ok && !updates) kept_.clear();  // what this peer kept led to a state it no longer holds
    if (ok) refused_updates_.clear();
    else if (updates) refused_updates_.insert(from);
    if (events_.sync_finished) events_.sync_finished(ok, got.step, updates);
    if (ok) set_step(std::max(step_, got.step), got.lineage);
    // Check again: the collaboration may have moved on during the download.
    phase_ = Phase::Joining;
    report();
    schedule_fetch(ok || updates ? 0 : 1.0);
  };
  if (updates) state_->download_updates(*provider, step_, lineage_, std::move(done));
  else state_->download(*provider, std::move(done));
}

// ---------------------------------------------------------------------------------------------
// Updates: the averaged vectors of recent steps, for peers that hold an older state

codec::Codec CollaborativePeer::update_codec() const {
  // The averaged values came off the wire (or are zeros), so the wire's fp16 holds them exactly;
  // other codecs do not re-encode their own output bit for bit.
  return config_.codec == codec::Codec::Fp16 ? codec::Codec::Fp16 : codec::Codec::Fp32;
}

void CollaborativePeer::keep_update(std::uint64_t step_after, std::uint64_t lineage_after) {
  if (config_.kept_updates == 0 || !config_.sync_state || !trainer_) return;
  // Only a chain of updates can be replayed: a step this peer did not take from the last kept one
  // (it loaded a state meanwhile) starts a new one.
  if (!kept_.empty() && (kept_.back().step_after != step_ || kept_.back().lineage_after != lineage_)) kept_.clear();
  KeptUpdate u{step_, lineage_, step_after, lineage_after, {}, 0};
  if (round_values_.empty()) u.virtual_bytes = codec::encoded_size(update_codec(), learner_->parameter_count());
  else codec::encode(update_codec(), round_values_, u.bytes);
  kept_.push_back(std::move(u));
  while (kept_.size() > config_.kept_updates) kept_.pop_front();
}

std::optional<StateSnapshot> CollaborativePeer::kept_updates(std::uint64_t since_step, std::uint64_t since_lineage) const {
  // Only updates that lead to the state this peer holds now.
  if (kept_.empty() || kept_.back().step_after != step_ || kept_.back().lineage_after != lineage_) return std::nullopt;
  auto first = std::find_if(kept_.begin(), kept_.end(), [&](const KeptUpdate& u) {
    return u.step_before == since_step && u.lineage_before == since_lineage;
  });
  if (first == kept_.end()) return std::nullopt;
  StateSnapshot snap;
  snap.step = step_;
  snap.lineage = lineage_;
  for (auto it = first; it != kept_.end(); ++it) {
    snap.bytes.insert(snap.bytes.end(), it->bytes.begin(), it->bytes.end());
    snap.virtual_bytes += it->virtual_bytes;
  }
  return snap;
}

bool CollaborativePeer::apply_updates(const StateSnapshot& got) {
  // A micro-batch in flight when the download began has landed since, computed on the old
  // parameters. The replay below hands the learner's accumulation over and overwrites it, so it is
  // thrown away here and counted so, as what the peer held when it fell behind was: kept, the
  // trainer would count it into the next step while the learner no longer held its gradient.
  if (trainer_ && trainer_->accumulated() > 0) discard_accumulated();
  if (!learner_->has_values()) return true;  // sizes only: the step and lineage are what changes
  const std::size_t each = codec::encoded_size(update_codec(), learner_->parameter_count());
  if (got.bytes.empty() || got.bytes.size() % each != 0) return false;
  // Each update is applied as the peers that averaged it applied it: the averaged vector in the
  // learner's buffer, then the step.
  for (std::size_t at = 0; at < got.bytes.size(); at += each) {
    const std::span<float> buffer = learner_->begin_averaging(0);
    codec::decode(update_codec(), std::span<const std::uint8_t>(got.bytes).subspan(at, each), buffer);
    learner_->apply_averaged();
  }
  return true;
}

void CollaborativePeer::start_training() {
  phase_ = Phase::Training;
  report();
  if (trainer_ && !left_ && !(in_round_ && sequential())) trainer_->resume();
}

// ---------------------------------------------------------------------------------------------
// Groups and rounds

void CollaborativePeer::maybe_look_for_group(const progress::GlobalProgress& g) {
  if (left_ || in_round_ || coordinator_->looking()) return;
  if (g.eta_s > timeouts_.matchmaking_time()) return;
  // Formation is measured from when the step was due (or from now, when it already is): the time a
  // group takes beyond that is what the lead must cover. Measured from the start of the search it
  // would include the lead itself and feed back into it until every peer looked at once.
  const Seconds due = env_.now() + std::max(0.0, g.eta_s);
  coordinator_->look_for_group(
      [this, alive = alive_, due](std::optional<matchmaking::Group> group) {
        if (!*alive) return;
        if (group) timeouts_.on_group_formed(std::max(0.0, env_.now() - due));
        on_group(std::move(group));
      },
      config_.group_timeout, env_.now() + g.eta_s);
}

void CollaborativePeer::on_group(std::optional<matchmaking::Group> group) {
  // No group, or one without a gradient to average (only auxiliary peers met), or we fell behind
  // meanwhile: look again.
  if (left_) return;
  if (!group) return schedule_fetch(config_.min_fetch_period);
  // A member holding an older step's state than another's missed a round: every member leaves it
  // out alike (state_cohort.h). Left out, this peer reads the progress at once, and loads the step
  // it missed.
  if (std::optional<matchmaking::Group> cohort = newest_state_cohort(*group)) {
    if (!cohort->index_of(env_.self())) {
      ++left_behind_;
      return schedule_fetch(0);
    }
    group = std::move(cohort);
  }
  std::shared_ptr<const planner::PlannerInput> input = round_input(*group);
  const averaging::RoleAssignment* roles = roles_for(*group, input);
  if (!roles || phase_ != Phase::Training) return schedule_fetch(config_.min_fetch_period);
  // A group this peer averaged in before (a restarted leader whose draws repeat its predecessor's,
  // or a Begin replayed from the network): its parts would mix with the old round's. Decline it;
  // the other members see this peer drop out.
  if (averager_->has_round(group->group_id)) {
    ++repeated_groups_;
    return schedule_fetch(config_.min_fetch_period);
  }
  // The group may form before the step is due: each member starts its part once its own estimate
  // says the step is due (or someone already took it).
  in_round_ = true;  // no new search and no state download while this group waits
  round_step_ = next_round_step(*group, *input);
  group_formed_ = env_.now();
  if (events_.grouped) events_.grouped(*group, round_step_);
  waiting_ = WaitingRound{std::move(*group), std::move(input), roles, config_.roles_cache->generation()};
  waiting_deadline_ = env_.now() + config_.group_timeout;
  wait_for_step();
}

void CollaborativePeer::wait_for_step() {
  env_.cancel(ready_timer_);
  ready_timer_ = 0;
  // Its members' quotas only: a peer that left after the last round, and whose drop this peer did
  // not see (its part of that round had already come back), must not hold the group up.
  const std::vector<PeerId> members = waiting_->group.peers();
  const progress::GlobalProgress g = coordinator_->estimate(env_.now(), members);
  // Late: others already took this step, or the group has waited long enough.
  const bool late = g.global_step >= round_step_ || env_.now() >= waiting_deadline_;
  // Under a quota a worker counts its own samples exactly. Its estimate extrapolates the declared
  // speed, and on a machine running slower it would start the round before the last inner step.
  const bool own_in = config_.quota == 0 || !trainer_ || trainer_->quota_reached();
  // Due: the target is reached, or nobody trains (nothing will change).
  if (late || (own_in && (g.ready || !std::isfinite(g.eta_s)))) {
    const WaitingRound round = std::move(*waiting_);
    waiting_.reset();
    return begin_round(round);
  }
  // Until its own quota is in, on_samples wakes it; the timer is for the others and the deadline.
  const Seconds wait = own_in ? std::max(g.eta_s, 1e-3) : std::max(waiting_deadline_ - env_.now(), 1e-3);
  ready_timer_ = env_.schedule(wait, [this] {
    ready_timer_ = 0;
    wait_for_step();
  });
}

std::shared_ptr<const planner::PlannerInput> CollaborativePeer::round_input(const matchmaking::Group& group) {
  return config_.group_inputs->input(
      group, static_cast<double>(config_.quota > 0 ? config_.quota : config_.target_batch),
      8.0 * static_cast<double>(codec::encoded_size(config_.codec, learner_->parameter_count())), config_.reachability);
}

const averaging::RoleAssignment* CollaborativePeer::roles_for(
    const matchmaking::Group& group, const std::shared_ptr<const planner::PlannerInput>& input) {
  std::optional<std::size_t> server;
  if (config_.strategy == averaging::Strategy::ParameterServer && config_.parameter_server)
    server = group.index_of(*config_.parameter_server);
  return config_.roles_cache->roles(config_.strategy, input, server);
}

void CollaborativePeer::begin_round(const WaitingRound& round) {
  env_.cancel(fetch_timer_);  // on_round_done reads the progress again
  fetch_timer_ = 0;
  ++rounds_begun_;
  const matchmaking::Group& group = round.group;
  const planner::PlannerInput& input = *round.input;
  // Looked up again only if the cache started over meanwhile (roles are a pure function of the
  // input, so the answer is the same).
  const averaging::RoleAssignment& roles = round.roles_generation == config_.roles_cache->generation()
                                               ? *round.roles
                                               : *roles_for(group, round.input);
  averaging::RoundPlan plan = config_.roles_cache->round_plan(
      group.group_id, roles, group.peers(), learner_->parameter_count(), config_.codec, config_.part_bytes, [&] {
        return matchmaking::plan_for_group(group, roles, learner_->parameter_count(), config_.codec, config_.part_bytes);
      });
  plan.clip = config_.clip;
  const auto me = plan.index_of(env_.self());
  if (!me) {  // neither sends nor reduces in this group: nothing to average, the step still lands
    in_round_ = false;
    set_step(round_step_, trainer_ ? lineage_diverged(lineage_, group.group_id, env_.self()) : kNoState);
    report();
    return schedule_fetch(0);
  }
  contributed_ = 0;
  round_id_ = plan.round_id;
  round_size_ = plan.members.size();
  sent_ = plan.sends(*me);
  round_senders_.clear();
  for (std::size_t i = 0; i < plan.members.size(); ++i)
    if (i != *me && plan.sends(i)) round_senders_.push_back(plan.members[i]);
  if (sent_) {
    if (trainer_) contributed_ = trainer_->take();
    plan.weights[*me] = contributed_ > 0 ? static_cast<double>(contributed_) : kEmptyContributionWeight;
  }
  if (trainer_ && sequential()) trainer_->pause();
  // Before the learner hands its vector over: a host that checks values keys them by the round.
  if (events_.round_started) events_.round_started(plan, contributed_);
  std::span<float> values;
  if (sent_) {
    values = learner_->begin_averaging(contributed_);
    // Kept for the end of the round: spans that do not come back whole are zeroed there.
    round_values_ = values;
    round_members_ = plan.members;
    round_span_begin_ = plan.span_begin;
  } else if (learner_->has_values()) {
    // A pure reducer sends no vector of its own, but the parts it reduces carry real values.
    reducer_scratch_.assign(learner_->parameter_count(), 0.0f);
    values = reducer_scratch_;
  }
  const averaging::Timeouts timeouts =
      timeouts_.for_round(config_.roles_cache->predicted_seconds(roles, input, plan.length(), config_.codec));
  std::vector<PeerId> broken;  // members whose connection broke while the group waited for its step
  for (const PeerId peer : plan.members)
    if (peer != env_.self() && mux_->last_broken(peer) >= group_formed_) broken.push_back(peer);
  averager_->start_round(std::move(plan), values, timeouts, [this, alive = alive_](const averaging::RoundOutcome& o) {
    if (!*alive) return;
    on_round_done(o);
  });
  // The round was not there to hear of them, and would wait a sender timeout for their parts (at
  // 256 peers with crashes, 23 s that held every sender up; docs/interpretations.md §33). The
  // group formed before they broke, so it holds the incarnation that is gone. Last: the round may
  // end here.
  for (const PeerId peer : broken) averager_->on_link_failure(peer);
}

void CollaborativePeer::set_step(std::uint64_t step, std::uint64_t lineage) {
  if (step != step_ || lineage != lineage_) partners_.clear();  // they hold the state it leaves
  lineage_ = lineage;
  if (step == step_) return;
  step_ = step;
  if (holds_state()) announce();
  if (events_.stepped) events_.stepped(step_);
}

void CollaborativePeer::on_round_done(const averaging::RoundOutcome& outcome) {
  in_round_ = false;
  // A sender holds what every sender that missed the same spans holds; a training peer that only
  // reduced, or sat the round out, holds a state of its own.
  const std::uint64_t lineage = sent_      ? lineage_after_round(lineage_, round_id_, outcome.unaveraged_spans)
                                : trainer_ ? lineage_diverged(lineage_, round_id_, env_.self())
                                           : kNoState;
  const std::uint64_t step_after = std::max(step_, round_step_);
  std::vector<PeerId> partners;  // set after set_step below, which clears the last round's
  if (sent_ && outcome.unaveraged_spans.empty()) {
    partners = std::move(round_senders_);
    std::erase_if(partners, [&](PeerId p) { return std::ranges::find(outcome.dropped_senders, p) != outcome.dropped_senders.end(); });
  }
  if (sent_) {
    // A span whose average did not come back whole takes no update: every sender that missed it
    // holds the same values there, where its own gradient would set it apart (state_lineage.h).
    if (!round_values_.empty())
      for (const PeerId reducer : outcome.unaveraged_spans)
        for (std::size_t k = 0; k < round_members_.size(); ++k)
          if (round_members_[k] == reducer)
            std::fill(round_values_.begin() + static_cast<std::ptrdiff_t>(round_span_begin_[k]),
                      round_values_.begin() + static_cast<std::ptrdiff_t>(round_span_begin_[k + 1]), 0.0f);
    keep_update(step_after, lineage);  // before the learner takes the buffer
    learner_->apply_averaged();
  }
  sent_ = false;
  round_values_ = {};
  // A round that dropped every other member says more about this peer (it started early, or was
  // cut off) than about them: it tells its coordinator nothing, or it would leave out, and ban from
  // its DHT, everyone it knows (a live DiLoCo worker isolated itself that way).
  std::set<PeerId> lost;
  for (const auto* dropped : {&outcome.dropped_senders, &outcome.dropped_reducers})
    for (const PeerId peer : *dropped)
      if (peer != env_.self()) lost.insert(peer);
  if (lost.size() + 1 < round_size_)
    for (const PeerId peer : lost) coordinator_->member_lost(peer);
  set_step(step_after, lineage);
  partners_ = std::move(partners);
  const std::uint64_t contributed = std::exchange(contributed_, 0);
  // Before computing resumes: a host that reads the parameters behind the learner's queued work
  // then reads them as the step left them (a DiLoCo inner step changes them).
  if (events_.round_finished) events_.round_finished(outcome, contributed, step_);
  if (trainer_ && !left_ && phase_ == Phase::Training) trainer_->resume();
  report();
  schedule_fetch(0);
}

}  // namespace swarmlab::core::training
