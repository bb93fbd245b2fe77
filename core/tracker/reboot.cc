#include "core/tracker/reboot.h"

#include <algorithm>
#include <stdexcept>

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

TrackerRebooter::TrackerRebooter(Environment& env, Seconds retry, Seconds timeout)
    : env_(env), retry_(retry), timeout_(timeout) {}

TrackerRebooter::~TrackerRebooter() {
  env_.cancel(retry_timer_);
  env_.cancel(timeout_timer_);
}

void TrackerRebooter::reboot(const TrackerSnapshot& snapshot, std::vector<raft::CandidatePeer> live_peers,
                             TrackerGroupOptions options, Done done) {
  if (busy()) throw std::logic_error("TrackerRebooter: a reboot is under way");
  if (live_peers.empty()) throw std::invalid_argument("TrackerRebooter: no live peer to found the group on");
  outcome_ = RebootOutcome{};
  outcome_.plan = plan_reboot(snapshot, std::move(live_peers), std::move(options));
  outcome_.started = env_.now();
  request_ = RebootRequest{};
  request_.request_id = next_request_id_++;
  request_.title = snapshot.title;
  request_.generation = snapshot.generation + 1;
  request_.members = outcome_.plan.members.members;
  request_.candidates = outcome_.plan.candidates;
  request_.state = snapshot.state;
  with_state_ = encode(request_);
  request_.state.clear();  // the other candidates wait to be added and get the state from the leader
  without_state_ = encode(request_);
  unanswered_ = std::set<PeerId>(request_.candidates.begin(), request_.candidates.end());
  done_ = std::move(done);
  timeout_timer_ = env_.schedule(timeout_, [this] {
    timeout_timer_ = 0;
    finish(false);
  });
  // From a timer, so `done` cannot run inside this call (a reply could not arrive before anyway).
  retry_timer_ = env_.schedule(0, [this] { send_unanswered(); });
}

void TrackerRebooter::send_unanswered() {
  retry_timer_ = 0;
  for (PeerId p : unanswered_) {
    const bool member = outcome_.plan.members.contains(p);
    env_.send(p, Message{member ? with_state_ : without_state_, 0});
    ++requests_sent_;
  }
  retry_timer_ = env_.schedule(retry_, [this] { send_unanswered(); });
}

void TrackerRebooter::handle(PeerId from, const Message& message) {
  RebootReply reply;
  try {
    reply = decode_reboot_reply(message.bytes);
  } catch (const DecodeError&) {
    ++rejected_;
    return;
  }
  if (!busy() || reply.request_id != request_.request_id || reply.generation != request_.generation ||
      !unanswered_.erase(from)) {
    ++rejected_;  // an old reboot's, a repeat, or from a peer not asked
    return;
  }
  const bool member = outcome_.plan.members.contains(from);
  auto& list = reply.status == RebootStatus::Hosting ? outcome_.hosting : outcome_.refused;
  list.insert(std::upper_bound(list.begin(), list.end(), from), from);
  if (member && reply.status != RebootStatus::Hosting) return finish(false);
  for (PeerId m : outcome_.plan.members.members)
    if (unanswered_.count(m)) return;
  finish(true);
}

void TrackerRebooter::finish(bool ok) {
  if (!busy()) return;
  env_.cancel(retry_timer_);
  env_.cancel(timeout_timer_);
  retry_timer_ = timeout_timer_ = 0;
  outcome_.ok = ok;
  outcome_.finished = env_.now();
  unanswered_.clear();
  Done done = std::move(done_);
  done_ = nullptr;
  done(outcome_);
}

std::uint64_t restored_last_seq(std::span<const std::uint8_t> state, PeerId origin, std::uint64_t client,
                                const TrackerLimits& limits) {
  TrackerStateMachine machine(limits);
  machine.restore(state);
  return machine.last_seq(origin, client);
}

}  // namespace swarmlab::core::tracker
