#include "core/allreduce/halving_doubling_averager.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/wire.h"

namespace swarmlab::core::allreduce {

namespace {

// A replica group of one: it is its own majority, so it elects itself on the first turn of the
// event loop and has nobody to send heartbeats to.
raft::RaftConfig lone_replica_config(PeerId self) {
  raft::RaftConfig c = replica_group_raft_config(std::uint64_t{self} + 1);
  c.election_timeout_min = c.election_timeout_max = 0;
  c.heartbeat_interval = 1e9;  // never, in practice (and still a valid duration for a live clock)
  c.snapshot_threshold = 0;
  return c;
}

}  // namespace

HalvingDoublingAverager::HalvingDoublingAverager(Environment& env, PeerLimits* limits) : env_(env), early_(limits) {}

HalvingDoublingAverager::~HalvingDoublingAverager() {
  for (TimerHandle t : {done_timer_, retire_timer_, release_timer_}) env_.cancel(t);
}

void HalvingDoublingAverager::retire() {
  env_.cancel(release_timer_);
  release_timer_ = 0;
  retired_ = std::move(replica_);  // an earlier retired one goes now: nothing of it is on the stack
  if (!retire_timer_ && retired_)
    retire_timer_ = env_.schedule(0, [this] {
      retire_timer_ = 0;
      retired_.reset();
    });
}

void HalvingDoublingAverager::start_round(averaging::RoundPlan plan, std::span<float> values,
                                          averaging::Timeouts timeouts, averaging::ButterflyRound::Done done) {
  const std::uint64_t id = plan.round_id;
  if (has_round(id))
    throw std::invalid_argument("halving-doubling: round " + std::to_string(id) + " already started on this peer");
  if (plan.clip) throw std::invalid_argument("halving-doubling: CenteredClip needs every contribution of a block at one reducer");
  plan.validate();
  const auto me = plan.index_of(env_.self());
  if (!me) throw std::invalid_argument("halving-doubling: this peer is not a member of the round");
  started_.insert(id);
  ReplicaGroupPlan hd;
  hd.round_id = id;
  hd.length = plan.length();
  hd.codec = plan.codec;
  hd.part_bytes = plan.part_bytes;
  member_of_participant_.clear();
  if (!plan.exchange_order.empty()) {
    member_of_participant_.assign(plan.exchange_order.begin(), plan.exchange_order.end());
  } else {
    for (std::size_t k = 0; k < plan.size(); ++k)
      if (plan.sends(k)) member_of_participant_.push_back(k);
  }
  for (std::size_t k : member_of_participant_) {
    hd.groups.push_back({plan.members[k]});
    hd.weights.push_back(plan.weights[k]);
  }
  plan_ = std::move(plan);
  done_ = std::move(done);
  current_ = id;
  retire();
  if (!plan_.sends(*me)) {  // no part in the exchange: done at once (not inside this call)
    averaging::RoundOutcome o;
    o.round_id = id;
    o.completed = true;
    o.started = o.finished = env_.now();
    o.fraction_averaged = 1;
    done_timer_ = env_.schedule(0, [this, o] {
      done_timer_ = 0;
      if (auto d = std::exchange(done_, nullptr)) d(o);
    });
    early_.take(id);  // nothing here reads them
    return;
  }
  replica_ = std::make_unique<ReplicaPeer>(env_, lone_replica_config(env_.self()), std::vector<PeerId>{env_.self()});
  ReplicaTimeouts rt;
  rt.partner = partner_timeout_ = timeouts.sender;
  rt.round = timeouts.round;
  replica_->start_round(std::move(hd), values, rt, [this](const ReplicaOutcome& o) { finish(o); });
  for (const auto& e : early_.take(id)) replica_->handle(e.from, e.message);
}

void HalvingDoublingAverager::finish(const ReplicaOutcome& o) {
  if (o.round_id != current_) return;  // a round this peer has moved on from
  averaging::RoundOutcome out;
  out.round_id = o.round_id;
  out.completed = o.completed;
  out.started = o.started;
  out.finished = o.finished;
  // As a butterfly round counts it: the share holding an average every survivor agrees on.
  std::uint64_t stale = 0;
  for (const ElementRange& r : o.stale) stale += r.count;
  out.fraction_averaged = 1 - static_cast<double>(stale) / static_cast<double>(std::max<std::uint64_t>(plan_.length(), 1));
  std::set<std::uint32_t> lost;
  for (const LostChunk& c : o.lost_chunks) lost.insert(c.group);
  for (std::uint32_t g : lost) out.dropped_senders.push_back(plan_.members[member_of_participant_[g]]);
  // Members whose span overlaps a stale range (both lists are in element order).
  std::size_t r = 0;
  for (std::size_t k = 0; k < plan_.size(); ++k) {
    const std::uint64_t first = plan_.span_begin[k], end = plan_.span_begin[k + 1];
    while (r < o.stale.size() && o.stale[r].first + o.stale[r].count <= first) ++r;
    if (first < end && r < o.stale.size() && o.stale[r].first < end) out.unaveraged_spans.push_back(plan_.members[k]);
  }
  if (std::isfinite(partner_timeout_))
    release_timer_ = env_.schedule(partner_timeout_, [this] {
      release_timer_ = 0;
      retire();
    });
  if (auto d = std::exchange(done_, nullptr)) d(out);
}

void HalvingDoublingAverager::handle(PeerId from, const Message& message) {
  DecodedChunk chunk;
  try {
    chunk = decode_chunk(message);
  } catch (const DecodeError&) {
    ++malformed_;
    return;
  }
  const std::uint64_t id = chunk.header.round_id;
  if (id == current_ && replica_) {
    replica_->handle(from, message);
  } else if (has_round(id)) {
    ++late_;
  } else {
    early_.keep(from, message, id);
  }
}

void HalvingDoublingAverager::on_link_failure(PeerId peer) {
  if (replica_) replica_->on_link_failure(peer);
}

}  // namespace swarmlab::core::allreduce
