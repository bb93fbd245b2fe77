#include "core/allreduce/replicated_allreduce.h"

#include <algorithm>
#include <stdexcept>

#include "core/wire.h"

namespace swarmlab::core::allreduce {

std::optional<std::uint32_t> ReplicaGroupPlan::group_of(PeerId peer) const {
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (std::find(groups[g].begin(), groups[g].end(), peer) != groups[g].end()) return static_cast<std::uint32_t>(g);
  return std::nullopt;
}

std::uint64_t ReplicaGroupPlan::elements_per_part() const { return codec::elements_fitting(codec, part_bytes); }

void ReplicaGroupPlan::validate() const {
  if (round_id == 0) throw std::invalid_argument("replicated all-reduce: round_id must be > 0");
  if (groups.empty() || groups.size() > kMaxParticipants)
    throw std::invalid_argument("replicated all-reduce: 1 to 4096 groups");
  if (weights.size() != groups.size()) throw std::invalid_argument("replicated all-reduce: one weight per group");
  for (double w : weights)
    if (!(w > 0) || w > 1e300) throw std::invalid_argument("replicated all-reduce: weights must be positive");
  std::set<PeerId> seen;
  for (const auto& g : groups) {
    if (g.empty()) throw std::invalid_argument("replicated all-reduce: a group without replicas");
    for (PeerId p : g)
      if (!seen.insert(p).second) throw std::invalid_argument("replicated all-reduce: a peer in two places");
  }
  if (length < groups.size() || length > (std::uint64_t{1} << 48))
    throw std::invalid_argument("replicated all-reduce: between P and 2^48 elements");
  if (part_bytes <= codec::encoded_size(codec, 0))
    throw std::invalid_argument("replicated all-reduce: part_bytes must exceed the codec's header");
}

ReplicatedAllReduce::ReplicatedAllReduce(Environment& env, raft::RaftNode& raft, const StepLog& log,
                                         ReplicaGroupPlan plan, std::span<float> values, ReplicaTimeouts timeouts,
                                         Done done)
    : env_(env),
      raft_(raft),
      log_(log),
      plan_((plan.validate(), std::move(plan))),
      schedule_(static_cast<std::uint32_t>(plan_.groups.size())),
      values_(values),
      timeouts_(timeouts),
      done_(std::move(done)) {
  const auto g = plan_.group_of(env_.self());
  if (!g) throw std::invalid_argument("replicated all-reduce: this peer is in no group of the plan");
  group_ = *g;
  if (!values_.empty() && values_.size() != plan_.length)
    throw std::invalid_argument("replicated all-reduce: values must hold plan.length elements");
  const std::size_t P = plan_.groups.size(), Q = schedule_.blocks();
  // Equal blocks, the remainder spread one element at a time: block b starts at floor(b L / Q).
  for (std::size_t b = 0; b <= Q; ++b) block_begin_.push_back(plan_.length * b / Q);
  block_.assign(Q, BlockTag{plan_.weights[group_], 1, false});
  if (schedule_.merging_steps() == 0 && group_ < Q) block_[group_].final = true;  // a lone participant
  const std::uint32_t steps = schedule_.steps();
  incoming_.resize(steps);
  lost_.assign(steps, false);
  sent_to_.resize(steps);
  sent_values_.resize(steps);
  captured_.assign(steps, false);
  pulled_.assign(steps, false);
  for (const auto& members : plan_.groups) leader_hint_.push_back(members.front());
  heard_.assign(P, 0);
}

ReplicatedAllReduce::~ReplicatedAllReduce() {
  for (TimerHandle t : {partner_timer_, round_timer_, resume_timer_, done_timer_}) env_.cancel(t);
}

ReplicatedAllReduce::Range ReplicatedAllReduce::elements_of(BlockRange blocks) const {
  const std::uint64_t first = block_begin_[blocks.first];
  return {first, block_begin_[blocks.first + blocks.count] - first};
}

std::uint32_t ReplicatedAllReduce::parts_of(Range range) const {
  const std::uint64_t per = plan_.elements_per_part();
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (range.count + per - 1) / per));
}

bool ReplicatedAllReduce::in_group(std::uint32_t g, PeerId peer) const {
  const auto& members = plan_.groups[g];
  return std::find(members.begin(), members.end(), peer) != members.end();
}

void ReplicatedAllReduce::start() {
  if (started_) return;
  started_ = true;
  started_at_ = env_.now();
  outcome_.round_id = plan_.round_id;
  outcome_.started = started_at_;
  if (std::isfinite(timeouts_.round))
    round_timer_ = env_.schedule(timeouts_.round, [this] {
      round_timer_ = 0;
      finish(false);
    });
  if (schedule_.steps() == 0) {  // one group: nothing to exchange
    finish(true);
    return;
  }
  apply_committed_steps();
  on_raft_applied();
}

// ---- Messages ---------------------------------------------------------------------------------

void ReplicatedAllReduce::handle(PeerId from, const Message& message) {
  DecodedChunk chunk;
  try {
    chunk = decode_chunk(message);
  } catch (const DecodeError&) {
    ++rejected_;
    return;
  }
  const ChunkHeader& h = chunk.header;
  if (h.round_id != plan_.round_id || h.step >= schedule_.steps() ||
      h.from_group >= plan_.groups.size() || schedule_.partner(group_, h.step) != std::optional(h.from_group)) {
    ++rejected_;
    return;
  }
  if (h.kind != ChunkKind::Part) {
    if (!in_group(h.from_group, from)) {
      ++rejected_;
      return;
    }
    leader_hint_[h.from_group] = from;
    heard_[h.from_group] = env_.now();
    if (h.kind == ChunkKind::Pull) on_pull(from, h);
    return;
  }
  // A part comes from the partner group, or is forwarded by our own leader.
  if (finished_) return;
  if (!in_group(h.from_group, from) && !in_group(group_, from)) {
    ++rejected_;
    return;
  }
  on_part(from, chunk, message);
}

void ReplicatedAllReduce::on_part(PeerId from, const DecodedChunk& chunk, const Message& message) {
  const ChunkHeader& h = chunk.header;
  const BlockRange blocks = schedule_.received(group_, h.step);
  if (blocks.empty()) {  // the partner sends nothing at this step
    ++rejected_;
    return;
  }
  const Range range = elements_of(blocks);
  const std::uint32_t parts = parts_of(range);
  const std::uint64_t per = plan_.elements_per_part();
  // The geometry is a function of the plan: anything else is not a part of this round.
  if (h.parts != parts || h.part >= parts || h.codec != plan_.codec || chunk.has_payload != carries_values() ||
      (h.part == 0 && h.blocks.size() != blocks.count) ||
      std::any_of(h.blocks.begin(), h.blocks.end(), [&](const BlockTag& t) { return t.groups > plan_.groups.size(); })) {
    ++rejected_;
    return;
  }
  const std::uint64_t first = range.first + std::uint64_t{h.part} * per;
  const std::uint64_t count = std::min<std::uint64_t>(per, range.first + range.count - first);
  if (h.first_element != first || h.elements != count) {
    ++rejected_;
    return;
  }
  const bool from_partner = in_group(h.from_group, from);
  if (from_partner) {
    leader_hint_[h.from_group] = from;
    heard_[h.from_group] = env_.now();
    // Our chunk never reached the replica sending now, which leads that group: send it again.
    if (leading_ && h.step <= executed_ && !schedule_.sent(group_, h.step).empty() &&
        (!sent_to_[h.step] || (*sent_to_[h.step] != from && down_.count(*sent_to_[h.step]))))
      send_own(h.step, from);
  } else {
    raft_.heard_from_leader(from);
  }
  Incoming& in = incoming_[h.step];
  if (in.reduced || (!in.seen.empty() && in.seen[h.part])) {
    ++duplicates_;
    return;
  }
  if (in.seen.empty()) {
    in.seen.assign(parts, false);
    if (carries_values()) in.values.assign(range.count, 0.0f);
  }
  if (carries_values()) {
    try {
      codec::decode(h.codec, chunk.payload, std::span<float>(in.values).subspan(first - range.first, count));
    } catch (const std::exception&) {
      ++rejected_;
      return;
    }
  }
  if (h.part == 0) in.tags = h.blocks;
  in.seen[h.part] = true;
  ++in.parts_seen;
  // The leader replicates what it receives to its followers, part by part as it arrives.
  if (from_partner && leading_)
    for (PeerId p : plan_.groups[group_])
      if (p != env_.self() && !down_.count(p)) env_.send(p, message);
  if (!in.complete()) return;
  if (leading_) drive();
  else apply_committed_steps();
}

void ReplicatedAllReduce::on_pull(PeerId from, const ChunkHeader& h) {
  if (!leading_) return;  // a follower only notes who leads the partner group
  if (schedule_.sent(group_, h.step).empty()) {  // nothing of ours goes to that group at this step
    ++rejected_;
    return;
  }
  // Not there yet (the chunk goes to `from` when we are), or already on its way to `from`.
  if (h.step > executed_ || sent_to_[h.step] == from) {
    send_control(ChunkKind::Busy, h.step, from);
    return;
  }
  send_own(h.step, from);
}

void ReplicatedAllReduce::send_control(ChunkKind kind, std::uint32_t step, PeerId to) {
  ChunkHeader h;
  h.kind = kind;
  h.round_id = plan_.round_id;
  h.step = step;
  h.from_group = group_;
  env_.send(to, encode_chunk(h, {}));
}

void ReplicatedAllReduce::on_link_failure(PeerId peer) {
  down_.insert(peer);
  if (!leading_ || finished_ || executed_ >= schedule_.steps()) return;
  const std::uint32_t step = executed_;
  const auto partner = schedule_.partner(group_, step);
  if (!partner || schedule_.received(group_, step).empty() || !in_group(*partner, peer) || incoming_[step].complete())
    return;
  // The partner's leader is gone while we wait on it: ask every replica left. The one that leads
  // next answers; if none is left, the group is lost.
  pulled_[step] = false;
  send_pull(step);
  if (lost_groups_.count(*partner)) drive();
}

// ---- The leader's steps -----------------------------------------------------------------------

void ReplicatedAllReduce::drive() {
  while (leading_ && !finished_ && executed_ < schedule_.steps()) {
    const std::uint32_t step = executed_;
    const auto other = schedule_.partner(group_, step);
    if (!other) {  // an extra standing by, or a participant without an extra to fold in or serve
      take_step(step, false);
      continue;
    }
    const std::uint32_t partner = *other;
    if (!schedule_.sent(group_, step).empty() && !sent_to_[step] && !lost_groups_.count(partner) &&
        !down_.count(leader_hint_[partner]))
      send_own(step, leader_hint_[partner]);
    if (schedule_.received(group_, step).empty()) {  // a one-sided step: nothing to wait for
      take_step(step, false);
      continue;
    }
    if (lost_groups_.count(partner)) {
      take_step(step, true);
      continue;
    }
    if (!incoming_[step].complete()) {
      if (waiting_step_ != step) {
        waiting_step_ = step;
        waiting_since_ = env_.now();
      }
      // A leader that took over, or whose partner's leader is gone, asks for the chunk; otherwise
      // the partner pushes it.
      if (took_over_at_ || down_.count(leader_hint_[partner])) send_pull(step);
      if (lost_groups_.count(partner)) continue;  // no replica of it is left
      arm_partner_timer();
      return;
    }
    take_step(step, false);
  }
  env_.cancel(partner_timer_);
  partner_timer_ = 0;
  if (executed_ >= schedule_.steps() && !finished_) finish(true);
}

void ReplicatedAllReduce::take_step(std::uint32_t step, bool partner_lost) {
  lost_[step] = partner_lost;
  capture_sent(step);
  if (partner_lost) {
    const Range r = elements_of(schedule_.received(group_, step));
    lost_chunks_.push_back({step, *schedule_.partner(group_, step), r.first, r.count});
  } else if (!schedule_.received(group_, step).empty()) {
    reduce(step);
  }
  advance();
  propose(step);
}

void ReplicatedAllReduce::advance() {
  ++executed_;
  if (executed_ == schedule_.merging_steps() && group_ < schedule_.blocks()) block_[group_].final = true;
}

void ReplicatedAllReduce::propose(std::uint32_t step) {
  if (!raft_.propose(encode_step({plan_.round_id, step, lost_[step]}))) leading_ = false;
}

void ReplicatedAllReduce::reduce(std::uint32_t step) {
  const Incoming& in = incoming_[step];
  const BlockRange blocks = schedule_.received(group_, step);
  const bool halving = schedule_.merges(step);  // folding an extra in merges as halving does
  for (std::uint32_t i = 0; i < blocks.count; ++i) {
    const std::uint32_t b = blocks.first + i;
    BlockTag& mine = block_[b];
    const BlockTag& theirs = in.tags[i];
    if (carries_values()) {
      const std::uint64_t first = block_begin_[b], count = block_begin_[b + 1] - first;
      const std::uint64_t offset = first - block_begin_[blocks.first];
      float* v = values_.data() + first;
      const float* x = in.values.data() + offset;
      if (halving) {
        const double total = mine.weight + theirs.weight;
        const float a = static_cast<float>(mine.weight / total), c = static_cast<float>(theirs.weight / total);
        for (std::uint64_t e = 0; e < count; ++e) v[e] = a * v[e] + c * x[e];
      } else {
        std::copy(x, x + count, v);
      }
    }
    if (halving) {
      mine.weight += theirs.weight;
      // Capped: a partner cannot make a block include more participants than the round has.
      mine.groups = std::min<std::uint32_t>(mine.groups + theirs.groups, static_cast<std::uint32_t>(plan_.groups.size()));
    } else {
      mine = theirs;
    }
  }
  incoming_[step].reduced = true;
}

void ReplicatedAllReduce::capture_sent(std::uint32_t step) {
  if (captured_[step] || !carries_values() || schedule_.sent(group_, step).empty()) return;
  captured_[step] = true;
  const Range range = elements_of(schedule_.sent(group_, step));
  sent_values_[step].assign(values_.begin() + static_cast<std::ptrdiff_t>(range.first),
                            values_.begin() + static_cast<std::ptrdiff_t>(range.first + range.count));
}

void ReplicatedAllReduce::send_own(std::uint32_t step, PeerId to) {
  const BlockRange blocks = schedule_.sent(group_, step);
  const Range range = elements_of(blocks);
  const std::uint32_t parts = parts_of(range);
  const std::uint64_t per = plan_.elements_per_part();
  capture_sent(step);
  sent_to_[step] = to;
  ChunkHeader h;
  h.kind = ChunkKind::Part;
  h.round_id = plan_.round_id;
  h.step = step;
  h.from_group = group_;
  h.parts = parts;
  h.codec = plan_.codec;
  for (std::uint32_t part = 0; part < parts; ++part) {
    h.part = part;
    h.first_element = range.first + std::uint64_t{part} * per;
    const std::uint64_t count = std::min<std::uint64_t>(per, range.first + range.count - h.first_element);
    h.elements = static_cast<std::uint32_t>(count);
    h.blocks.clear();
    if (part == 0) h.blocks.assign(block_.begin() + blocks.first, block_.begin() + blocks.first + blocks.count);
    std::span<const float> payload;
    if (carries_values()) payload = std::span<const float>(sent_values_[step]).subspan(h.first_element - range.first, count);
    env_.send(to, encode_chunk(h, payload));
  }
}

void ReplicatedAllReduce::send_pull(std::uint32_t step) {
  const std::uint32_t partner = *schedule_.partner(group_, step);
  bool any = false;
  for (PeerId p : plan_.groups[partner])
    if (!down_.count(p)) any = true;
  if (!any) {
    partner_lost(step);
    return;
  }
  if (pulled_[step]) return;
  pulled_[step] = true;
  for (PeerId p : plan_.groups[partner])
    if (!down_.count(p)) send_control(ChunkKind::Pull, step, p);
}

void ReplicatedAllReduce::partner_lost(std::uint32_t step) {
  lost_groups_.insert(*schedule_.partner(group_, step));
  env_.cancel(partner_timer_);
  partner_timer_ = 0;
}

void ReplicatedAllReduce::arm_partner_timer() {
  if (partner_timer_) return;
  partner_timer_ = env_.schedule(timeouts_.partner / 4, [this] {
    partner_timer_ = 0;
    if (!leading_ || finished_ || executed_ >= schedule_.steps() || incoming_[executed_].complete()) return;
    const std::uint32_t step = executed_;
    if (schedule_.received(group_, step).empty()) return;  // nothing awaited at this step
    const std::uint32_t partner = *schedule_.partner(group_, step);
    const Seconds heard = heard_[partner];
    if (env_.now() - std::max(heard, waiting_since_) + 1e-9 >= timeouts_.partner) {
      partner_lost(step);
      drive();
      return;
    }
    // A keepalive: a live partner answers with its chunk or Busy. With its leader gone, ask every
    // replica left: the next leader answers once elected.
    if (!down_.count(leader_hint_[partner])) {
      send_control(ChunkKind::Pull, step, leader_hint_[partner]);
    } else {
      for (PeerId p : plan_.groups[partner])
        if (!down_.count(p)) send_control(ChunkKind::Pull, step, p);
    }
    arm_partner_timer();
  });
}

// ---- Raft -------------------------------------------------------------------------------------

void ReplicatedAllReduce::on_role(raft::Role role) {
  if (role == raft::Role::Leader) return;  // it leads once everything in its log is applied
  leading_ = false;
  env_.cancel(partner_timer_);
  partner_timer_ = 0;
}

void ReplicatedAllReduce::on_raft_applied() {
  if (!started_ || leading_ || resume_timer_ || !raft_.is_leader()) return;
  if (raft_.applied_index() != raft_.last_index()) return;
  // Not from inside the node's apply loop: propose() appends to the log it is iterating.
  resume_timer_ = env_.schedule(0, [this] {
    resume_timer_ = 0;
    resume();
  });
}

void ReplicatedAllReduce::resume() {
  if (!started_ || leading_ || !raft_.is_leader()) return;
  leading_ = true;
  if (finished_) return;  // it only answers pulls for the chunks it sent
  // The plan names who led when the round started; anyone else leads because that one failed.
  if (plan_.groups[group_].front() != env_.self() && !took_over_at_) took_over_at_ = executed_;
  std::fill(pulled_.begin(), pulled_.end(), false);
  // Steps this replica reduced ahead of the log (it led before): the followers need their data and
  // entries again. Staged chunks of later steps go to them too.
  for (std::uint32_t s = committed_; s < schedule_.steps(); ++s) forward_staged(s);
  for (std::uint32_t s = committed_; s < executed_; ++s) propose(s);
  drive();
}

void ReplicatedAllReduce::forward_staged(std::uint32_t step) {
  const Incoming& in = incoming_[step];
  if (in.seen.empty()) return;  // nothing staged
  const BlockRange blocks = schedule_.received(group_, step);
  const Range range = elements_of(blocks);
  const std::uint64_t per = plan_.elements_per_part();
  ChunkHeader h;
  h.round_id = plan_.round_id;
  h.step = step;
  h.from_group = *schedule_.partner(group_, step);  // staged data came from it
  h.parts = static_cast<std::uint32_t>(in.seen.size());
  h.codec = plan_.codec;
  for (std::uint32_t part = 0; part < in.seen.size(); ++part) {
    if (!in.seen[part]) continue;
    h.part = part;
    h.first_element = range.first + std::uint64_t{part} * per;
    h.elements = static_cast<std::uint32_t>(std::min<std::uint64_t>(per, range.first + range.count - h.first_element));
    h.blocks.clear();
    if (part == 0) h.blocks = in.tags;
    std::span<const float> payload;
    if (carries_values()) payload = std::span<const float>(in.values).subspan(h.first_element - range.first, h.elements);
    const Message m = encode_chunk(h, payload);
    for (PeerId p : plan_.groups[group_])
      if (p != env_.self() && !down_.count(p)) env_.send(p, m);
  }
}

void ReplicatedAllReduce::on_step_committed(const StepEntry& entry) {
  if (entry.round_id != plan_.round_id) return;
  committed_ = std::max(committed_, entry.step + 1);
  if (entry.partner_lost && entry.step >= executed_) lost_[entry.step] = true;
  apply_committed_steps();
  // Committed and reduced: no new leader will forward this step again.
  Incoming& in = incoming_[entry.step];
  if (in.reduced) {
    in.values = {};
    in.tags = {};
  }
}

void ReplicatedAllReduce::apply_committed_steps() {
  if (!started_ || finished_) return;
  if (log_.round_id() == plan_.round_id) committed_ = std::max(committed_, log_.steps_done());
  // A follower reduces the committed steps whose data it holds, in order.
  while (!leading_ && executed_ < committed_) {
    const std::uint32_t step = executed_;
    capture_sent(step);
    if (lost_[step] || schedule_.received(group_, step).empty()) {  // nothing to reduce
      advance();
      continue;
    }
    if (!incoming_[step].complete()) return;  // its data is still on the way
    reduce(step);
    advance();
  }
  if (!leading_ && executed_ >= schedule_.steps()) finish(true);
}

void ReplicatedAllReduce::finish(bool completed) {
  if (finished_) return;
  finished_ = true;
  for (TimerHandle* t : {&partner_timer_, &round_timer_, &resume_timer_}) {
    env_.cancel(*t);
    *t = 0;
  }
  outcome_.completed = completed;
  outcome_.finished = env_.now();
  outcome_.led = leading_;
  outcome_.took_over_at = took_over_at_;
  outcome_.duplicate_parts = duplicates_;
  outcome_.lost_chunks = lost_chunks_;
  outcome_.rejected_messages = rejected_;
  std::uint64_t averaged = 0;
  for (std::size_t b = 0; b + 1 < block_begin_.size(); ++b) {
    const std::uint64_t first = block_begin_[b], count = block_begin_[b + 1] - first;
    if (block_[b].groups == plan_.groups.size()) averaged += count;
    if (block_[b].final || count == 0) continue;
    auto& stale = outcome_.stale;
    if (!stale.empty() && stale.back().first + stale.back().count == first) stale.back().count += count;
    else stale.push_back({first, count});
  }
  outcome_.fraction_averaged = static_cast<double>(averaged) / static_cast<double>(plan_.length);
  done_timer_ = env_.schedule(0, [this] {
    done_timer_ = 0;
    if (done_) done_(outcome_);
  });
}

}  // namespace swarmlab::core::allreduce
