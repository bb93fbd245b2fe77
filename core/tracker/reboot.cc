#include "core/tracker/reboot.h"

#include "core/tracker/state_machine.h"

namespace swarmlab::core::tracker {

TrackerBackup::TrackerBackup(Environment& env, TrackerClient& client, std::string title, std::uint64_t generation,
                             Seconds interval)
    : env_(env), client_(client), title_(std::move(title)), generation_(generation), interval_(interval) {}

TrackerBackup::~TrackerBackup() { stop(); }

void TrackerBackup::start() {
  stop();
  request();
  timer_ = env_.schedule(interval_, [this] {
    timer_ = 0;
    start();
  });
}

void TrackerBackup::stop() {
  env_.cancel(timer_);
  timer_ = 0;
}

void TrackerBackup::request() {
  if (in_flight_) return;  // a slow group gets one outstanding Export, not a queue of them
  in_flight_ = true;
  TrackerCommand c;
  c.op = TrackerOp::Export;
  const std::uint64_t generation = generation_;
  const Seconds requested_at = env_.now();
  // The client may call back after this backup is gone: the callback checks `alive_` first.
  std::weak_ptr<bool> alive = alive_;
  client_.submit(c, [this, alive, generation, requested_at](std::uint64_t, const std::optional<TrackerResult>& result) {
    if (alive.expired()) return;
    in_flight_ = false;
    if (!result || result->status != TrackerStatus::Ok || result->state.empty()) return;
    latest_ = TrackerSnapshot{title_, generation, result->state, requested_at, env_.now()};
    ++taken_;
  });
}

raft::MemoryStorage reboot_storage(std::span<const std::uint8_t> state, const raft::Configuration& members,
                                   const TrackerLimits& limits) {
  TrackerStateMachine check(limits);
  check.restore(state);  // throws DecodeError on a bad snapshot
  raft::MemoryStorage storage(members);
  raft::Snapshot snapshot;
  snapshot.last_index = 1;
  snapshot.last_term = 1;
  snapshot.config = members;
  snapshot.data.assign(state.begin(), state.end());
  storage.save_snapshot(std::move(snapshot));
  // The term must not be below the snapshot's last term, or the first leader's entries would
  // carry a lower term than the entry before them.
  storage.save_term_and_vote(1, std::nullopt);
  return storage;
}

RebootPlan plan_reboot(const TrackerSnapshot& snapshot, std::vector<raft::CandidatePeer> live_peers,
                       TrackerGroupOptions options) {
  options.generation = snapshot.generation + 1;
  RebootPlan plan;
  plan.raft = tracker_raft_config(snapshot.title, options);
  plan.candidates = tracker_candidates(snapshot.title, std::move(live_peers));
  plan.members = raft::Configuration::of(founding_members(plan.candidates, options.replicas));
  return plan;
}

std::uint64_t restored_last_seq(std::span<const std::uint8_t> state, std::uint64_t client, const TrackerLimits& limits) {
  TrackerStateMachine machine(limits);
  machine.restore(state);
  return machine.last_seq(client);
}

}  // namespace swarmlab::core::tracker
