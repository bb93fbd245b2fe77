#include "core/training/dht_coordinator.h"

#include <algorithm>

#include "core/matchmaking/group_plan.h"

namespace swarmlab::core::training {

namespace {

// A group has something to average when a member sends a vector, that is computes
// (averaging::RolesCache finds no sender otherwise): one of only reducers (CPU-only peers) has no
// gradient. Capacities are read as the round will read them (group_capacities).
bool some_member_computes(std::span<const matchmaking::Attachment> members) {
  return std::ranges::any_of(members, [](const matchmaking::Attachment& a) {
    return matchmaking::announced_capacity(a.bytes()).compute_sps > 0;
  });
}

}  // namespace

DhtCoordinator::DhtCoordinator(Environment& env, DhtCoordinatorConfig config)
    : env_(env), config_(std::move(config)) {
  if (!config_.matchmaking.worth_averaging) config_.matchmaking.worth_averaging = some_member_computes;
  // A member that crashed leaves the expectation at once, not when its record expires.
  config_.matchmaking.member_gone = [this, also = std::move(config_.matchmaking.member_gone)](PeerId peer) {
    tracker_->leave_out(peer);
    matchmaker_->set_expected_group_size(expected_members(read_step_));
    if (also) also(peer);
  };
  dht_ = std::make_unique<dht::DhtNode>(env_, dht::NodeId::random(env_.rng(), config_.dht.id_bits), config_.dht);
  tracker_ = std::make_unique<progress::ProgressTracker>(env_, *dht_, config_.progress);
  matchmaker_ = std::make_unique<matchmaking::Matchmaker>(env_, *dht_, config_.matchmaking);
}

// The matchmaker and tracker use the node: they go first.
DhtCoordinator::~DhtCoordinator() {
  matchmaker_.reset();
  tracker_.reset();
}

void DhtCoordinator::attach(ServiceMux& mux) {
  dht_->set_liveness([&mux](PeerId p) { return mux.last_heard(p); });
  mux.add(ServiceId::Dht, *dht_);
  mux.add(ServiceId::Matchmaking, *matchmaker_);
}

void DhtCoordinator::join(std::vector<PeerId> bootstrap, Joined done) { dht_->bootstrap(std::move(bootstrap), std::move(done)); }

void DhtCoordinator::report(const progress::LocalProgress& local) {
  // What others act on goes out at once; only the sample count waits for the report period.
  const bool changed = !published_ || published_->step != local.step || published_->activity != local.activity ||
                       published_->lineage != local.lineage;
  if (!changed && env_.now() - last_publish_ < config_.report_period) return;
  published_ = local;
  last_publish_ = env_.now();
  tracker_->report(local);
}

void DhtCoordinator::member_lost(PeerId peer) {
  dht_->suspect(peer);
  tracker_->leave_out(peer);
  matchmaker_->peer_lost(peer);
}

void DhtCoordinator::fetch(ProgressCallback done) {
  tracker_->fetch([this, done = std::move(done)](const progress::GlobalProgress& g) {
    read_step_ = g.global_step;
    matchmaker_->set_expected_group_size(expected_members(read_step_));
    done(g);
  });
}

// Who will average this step: every live record at the global step, or one behind (finishing the
// last round); peers further behind are loading state.
std::size_t DhtCoordinator::expected_members(std::uint64_t global_step) const {
  std::size_t expected = 1;  // this peer
  for (const auto& r : tracker_->others()) expected += r.step + 1 >= global_step;
  return expected;
}

progress::GlobalProgress DhtCoordinator::estimate(Seconds now, std::span<const PeerId> group) const {
  return tracker_->estimate(now, group);
}

std::span<const StateHolder> DhtCoordinator::peers_at(std::uint64_t step) const {
  peers_at_.clear();
  for (const auto& r : tracker_->others())
    if (r.step == step && !r.client_mode) peers_at_.push_back({r.peer, r.lineage});
  return peers_at_;
}

void DhtCoordinator::set_announcement(std::vector<std::uint8_t> bytes) { matchmaker_->set_gathered(std::move(bytes)); }

void DhtCoordinator::look_for_group(GroupCallback done, Seconds timeout, Seconds due) {
  matchmaker_->look_for_group(std::move(done), timeout, due);
}

void DhtCoordinator::cancel_search() { matchmaker_->cancel(); }

bool DhtCoordinator::looking() const { return matchmaker_->looking(); }

}  // namespace swarmlab::core::training
