#include "core/raft/node.h"

#include <algorithm>
#include <stdexcept>

namespace swarmlab::core::raft {

const char* to_string(Role role) {
  switch (role) {
    case Role::Follower:
      return "follower";
    case Role::PreCandidate:
      return "pre-candidate";
    case Role::Candidate:
      return "candidate";
    case Role::Leader:
      return "leader";
  }
  return "?";
}

RaftNode::RaftNode(Environment& env, RaftConfig config, RaftStorage& storage, StateMachine& machine, RaftHooks hooks)
    : env_(env), cfg_(std::move(config)), storage_(storage), machine_(machine), hooks_(std::move(hooks)) {
  const Snapshot& s = storage_.snapshot();
  if (s.last_index > 0) machine_.restore(s.data);
  commit_ = applied_ = s.last_index;
  recompute_config();
  reset_election_timer();
}

RaftNode::~RaftNode() {
  env_.cancel(election_timer_);
  env_.cancel(heartbeat_timer_);
}

// ---------------------------------------------------------------------------------------------
// Log and configuration helpers

std::optional<Term> RaftNode::term_at(Index index) const {
  const Snapshot& s = storage_.snapshot();
  if (index == s.last_index) return s.last_term;
  if (index < s.last_index || index > storage_.last_index()) return std::nullopt;
  return storage_.entry(index).term;
}

bool RaftNode::log_up_to_date(Index index, Term term) const {
  const Term mine = last_term();
  return term > mine || (term == mine && index >= last_index());
}

Configuration RaftNode::config_at(Index index) const {
  for (Index i = std::min(index, storage_.last_index()); i >= storage_.first_index(); --i) {
    const LogEntry& e = storage_.entry(i);
    if (e.type == EntryType::Config) return decode_config(e.data, cfg_.limits.max_members);
  }
  return storage_.snapshot().config;
}

void RaftNode::recompute_config() {
  Index index = storage_.snapshot().last_index;
  for (Index i = storage_.last_index(); i >= storage_.first_index(); --i) {
    if (storage_.entry(i).type == EntryType::Config) {
      index = i;
      break;
    }
  }
  set_config(config_at(index), index);
}

void RaftNode::set_config(Configuration config, Index index) {
  const bool changed = config != config_;
  config_ = std::move(config);
  config_index_ = index;
  if (role_ == Role::Leader) {
    // Replicate to every member but ourselves, and to the learner; forget peers that left.
    for (PeerId m : config_.members) {
      if (m == self() || progress_.count(m)) continue;
      Progress p;
      p.next = last_index() + 1;
      p.last_ack = env_.now();
      progress_.emplace(m, p);
    }
    if (learner_ && config_.contains(*learner_)) learner_.reset();
    for (auto it = progress_.begin(); it != progress_.end();) {
      if (!config_.contains(it->first) && it->first != learner_) {
        it = progress_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (changed && hooks_.on_config) hooks_.on_config(config_, index);
}

std::size_t RaftNode::count_members(const std::set<PeerId>& peers) const {
  std::size_t n = 0;
  for (PeerId p : peers) n += config_.contains(p) ? 1 : 0;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Timers and roles

void RaftNode::send(PeerId to, RaftMessage m) {
  m.group = cfg_.group;
  ++stats_.messages_sent;
  try {
    env_.send(to, Message{encode(m), 0});
  } catch (const std::out_of_range&) {
    // A configuration (from a leader's entries or snapshot) may name an id outside the
    // collaboration: corrupt or forged. Such a member is unreachable, never a crash.
    ++stats_.unknown_destinations;
  }
}

void RaftNode::reset_election_timer() {
  env_.cancel(election_timer_);
  const Seconds span = cfg_.election_timeout_max - cfg_.election_timeout_min;
  const Seconds timeout = cfg_.election_timeout_min + span * env_.rng().uniform();
  election_timer_ = env_.schedule(timeout, [this] {
    election_timer_ = 0;
    on_election_timeout();
  });
}

void RaftNode::set_role(Role role) {
  role_ = role;
  if (hooks_.on_role) hooks_.on_role(role_, term());
}

void RaftNode::on_election_timeout() {
  if (role_ == Role::Leader) return;
  leader_.reset();
  if (!config_.contains(self())) {
    // Not a voter (a new replica not yet added, or one removed): wait for a leader.
    if (role_ != Role::Follower) set_role(Role::Follower);
    reset_election_timer();
    return;
  }
  if (cfg_.pre_vote) {
    start_pre_vote();
  } else {
    start_election();
  }
}

void RaftNode::become_follower(Term term, std::optional<PeerId> leader) {
  const Role old = role_;
  const bool new_term = term > this->term();
  if (new_term) storage_.save_term_and_vote(term, std::nullopt);
  leader_ = leader;
  votes_.clear();
  if (old == Role::Leader) {
    env_.cancel(heartbeat_timer_);
    heartbeat_timer_ = 0;
    progress_.clear();
    learner_.reset();
    fail_pending_clients();
  }
  reset_election_timer();
  if (old != Role::Follower || new_term) set_role(Role::Follower);
}

void RaftNode::start_pre_vote() {
  votes_ = {self()};
  set_role(Role::PreCandidate);
  reset_election_timer();
  if (count_members(votes_) >= config_.quorum()) {
    start_election();
    return;
  }
  RaftMessage m;
  m.kind = MessageKind::VoteRequest;
  m.pre_vote = true;
  m.term = term() + 1;
  m.last_index = last_index();
  m.last_term = last_term();
  for (PeerId p : config_.members)
    if (p != self()) send(p, m);
}

void RaftNode::start_election() {
  storage_.save_term_and_vote(term() + 1, self());
  ++stats_.elections;
  votes_ = {self()};
  leader_.reset();
  set_role(Role::Candidate);
  reset_election_timer();
  if (count_members(votes_) >= config_.quorum()) {
    become_leader();
    return;
  }
  RaftMessage m;
  m.kind = MessageKind::VoteRequest;
  m.term = term();
  m.last_index = last_index();
  m.last_term = last_term();
  for (PeerId p : config_.members)
    if (p != self()) send(p, m);
}

void RaftNode::become_leader() {
  env_.cancel(election_timer_);
  election_timer_ = 0;
  leader_ = self();
  votes_.clear();
  progress_.clear();
  learner_.reset();
  leader_since_ = env_.now();
  role_ = Role::Leader;
  set_config(config_, config_index_);  // progress for every member
  storage_.append({term(), EntryType::Noop, {}});
  term_start_ = last_index();
  set_role(Role::Leader);
  heartbeat_timer_ = env_.schedule(cfg_.heartbeat_interval, [this] {
    heartbeat_timer_ = 0;
    on_heartbeat();
  });
  broadcast_append(false);
  advance_commit();  // a group of one commits at once
}

void RaftNode::on_heartbeat() {
  heartbeat_timer_ = env_.schedule(cfg_.heartbeat_interval, [this] {
    heartbeat_timer_ = 0;
    on_heartbeat();
  });
  const Seconds now = env_.now();
  if (cfg_.check_quorum && now - leader_since_ >= cfg_.election_timeout_max) {
    std::size_t heard = config_.contains(self()) ? 1 : 0;
    for (const auto& [peer, p] : progress_)
      if (config_.contains(peer) && now - p.last_ack < cfg_.election_timeout_max) ++heard;
    if (heard < config_.quorum()) {
      become_follower(term(), std::nullopt);
      return;
    }
  }
  broadcast_append(true);
  manage_membership();
}

// ---------------------------------------------------------------------------------------------
// Messages

bool RaftNode::receive(PeerId from, std::span<const std::uint8_t> bytes) {
  RaftMessage m;
  try {
    m = decode(bytes, cfg_.limits);
  } catch (const DecodeError&) {
    ++stats_.malformed;
    return false;
  }
  if (m.group != cfg_.group || from == self()) {
    ++stats_.malformed;
    return false;
  }
  ++stats_.messages_received;
  passed_over_.erase(from);  // alive after all: it may be proposed again
  switch (m.kind) {
    case MessageKind::VoteRequest:
      on_vote_request(from, m);
      break;
    case MessageKind::VoteReply:
      on_vote_reply(from, m);
      break;
    case MessageKind::AppendEntries:
      on_append_entries(from, m);
      break;
    case MessageKind::AppendReply:
      on_append_reply(from, m);
      break;
    case MessageKind::InstallSnapshot:
      on_install_snapshot(from, m);
      break;
    case MessageKind::SnapshotReply:
      on_snapshot_reply(from, m);
      break;
    case MessageKind::ClientRequest:
      on_client_request(from, m);
      break;
    case MessageKind::ClientReply:
      ++stats_.rejected;  // servers do not expect client replies
      break;
  }
  return true;
}

void RaftNode::on_vote_request(PeerId from, const RaftMessage& m) {
  // Leader stickiness: while a leader is known to be alive, ignore candidates (a removed or
  // partitioned server cannot disrupt the group).
  const bool in_lease = role_ == Role::Leader ||
                        (leader_ && env_.now() - last_leader_contact_ < cfg_.election_timeout_min);
  const bool log_ok = log_up_to_date(m.last_index, m.last_term);
  RaftMessage reply;
  reply.kind = MessageKind::VoteReply;
  reply.pre_vote = m.pre_vote;
  if (m.pre_vote) {
    // Would we vote in the candidate's next term? Changes no state.
    reply.granted = m.term > term() && log_ok && !in_lease;
    reply.term = reply.granted ? m.term : term();
    send(from, reply);
    return;
  }
  if (m.term > term()) {
    if (in_lease) {
      reply.term = term();
      send(from, reply);
      return;
    }
    become_follower(m.term, std::nullopt);
  }
  reply.granted = m.term == term() && log_ok && (!storage_.vote() || *storage_.vote() == from);
  if (reply.granted && !storage_.vote()) storage_.save_term_and_vote(term(), from);
  if (reply.granted) reset_election_timer();
  reply.term = term();
  send(from, reply);
}

void RaftNode::on_vote_reply(PeerId from, const RaftMessage& m) {
  if (m.pre_vote) {
    if (!m.granted) {
      if (m.term > term()) become_follower(m.term, std::nullopt);
      return;
    }
    if (role_ != Role::PreCandidate || m.term != term() + 1) return;
    votes_.insert(from);
    if (count_members(votes_) >= config_.quorum()) start_election();
    return;
  }
  if (m.term > term()) {
    become_follower(m.term, std::nullopt);
    return;
  }
  if (role_ != Role::Candidate || m.term != term() || !m.granted) return;
  votes_.insert(from);
  if (count_members(votes_) >= config_.quorum()) become_leader();
}

void RaftNode::heard_from_leader(PeerId from) {
  if (role_ != Role::Follower || leader_ != from) return;
  last_leader_contact_ = env_.now();
  reset_election_timer();
}

bool RaftNode::accept_leader(PeerId from, Term term) {
  if (role_ == Role::Leader && term == this->term()) {
    ++stats_.rejected;  // two leaders in one term: impossible unless the sender is faulty
    return false;
  }
  if (term > this->term() || role_ != Role::Follower) {
    become_follower(term, from);
  } else {
    leader_ = from;
    reset_election_timer();
  }
  last_leader_contact_ = env_.now();
  return true;
}

void RaftNode::on_append_entries(PeerId from, RaftMessage& m) {
  RaftMessage reply;
  reply.kind = MessageKind::AppendReply;
  if (m.term < term()) {
    reply.term = term();
    send(from, reply);
    return;
  }
  if (!accept_leader(from, m.term)) return;
  reply.term = term();

  const Snapshot& snap = storage_.snapshot();
  Index prev = m.prev_index;
  std::size_t skip = 0;
  const std::size_t n = m.entries.size();
  if (prev < snap.last_index) {
    // Entries up to our snapshot are committed here, hence in every leader's log: they match.
    const Index covered = snap.last_index - prev;
    if (covered >= n) {
      reply.success = true;
      reply.index = prev + n;
      send(from, reply);
      return;
    }
    skip = static_cast<std::size_t>(covered);
    prev = snap.last_index;
  } else if (prev > last_index()) {
    reply.index = last_index() + 1;
    send(from, reply);
    return;
  } else if (term_at(prev) != m.prev_term) {
    // Skip back over the whole conflicting term, but never into the committed prefix.
    const Term conflicting = *term_at(prev);
    Index hint = prev;
    const Index floor = std::max(snap.last_index, commit_);
    while (hint > floor + 1 && term_at(hint - 1) == conflicting) --hint;
    reply.index = std::max<Index>(hint, 1);
    send(from, reply);
    return;
  }

  Index index = prev;
  for (std::size_t j = skip; j < n; ++j) {
    ++index;
    LogEntry& e = m.entries[j];
    if (index <= last_index()) {
      if (term_at(index) == e.term) continue;
      if (index <= commit_) {
        ++stats_.rejected;  // would overwrite a committed entry: only a faulty leader asks that
        return;
      }
      storage_.truncate_from(index);
      if (config_index_ >= index) recompute_config();
    }
    storage_.append(e);
    if (e.type == EntryType::Config) set_config(decode_config(e.data, cfg_.limits.max_members), index);
  }
  const Index matched = prev + (n - skip);
  const Index new_commit = std::min(m.leader_commit, matched);
  if (new_commit > commit_) commit_ = new_commit;
  reply.success = true;
  reply.index = matched;
  send(from, reply);
  apply_committed();
}

void RaftNode::on_append_reply(PeerId from, const RaftMessage& m) {
  if (m.term > term()) {
    become_follower(m.term, std::nullopt);
    return;
  }
  if (role_ != Role::Leader || m.term != term()) return;
  auto it = progress_.find(from);
  if (it == progress_.end()) return;
  Progress& p = it->second;
  p.last_ack = env_.now();
  p.inflight = false;
  if (m.success) {
    if (m.index > last_index()) {
      ++stats_.rejected;
      return;
    }
    p.match = std::max(p.match, m.index);
    p.next = std::max(p.next, p.match + 1);
    advance_commit();
    if (role_ == Role::Leader && progress_.count(from) && p.next <= last_index()) send_append(from, false);
  } else {
    const Index hint = std::clamp<Index>(m.index, p.match + 1, last_index() + 1);
    if (hint < p.next) p.next = hint;
    send_append(from, false);
  }
}

void RaftNode::on_install_snapshot(PeerId from, RaftMessage& m) {
  RaftMessage reply;
  reply.kind = MessageKind::SnapshotReply;
  if (m.term < term()) {
    reply.term = term();
    send(from, reply);
    return;
  }
  if (!accept_leader(from, m.term)) return;
  reply.term = term();
  if (m.last_index > commit_) {
    try {
      machine_.restore(m.data);
    } catch (const DecodeError&) {
      ++stats_.rejected;
      return;
    }
    Snapshot s{m.last_index, m.last_term, std::move(m.config), std::move(m.data)};
    // Keep the log after the snapshot only when it continues the snapshot's history.
    if (term_at(s.last_index) != s.last_term) storage_.truncate_from(storage_.first_index());
    storage_.save_snapshot(std::move(s));
    commit_ = applied_ = m.last_index;
    ++stats_.snapshots_installed;
    recompute_config();
    if (hooks_.on_install_snapshot) hooks_.on_install_snapshot(m.last_index, m.last_term);
  }
  reply.index = m.last_index;
  send(from, reply);
}

void RaftNode::on_snapshot_reply(PeerId from, const RaftMessage& m) {
  if (m.term > term()) {
    become_follower(m.term, std::nullopt);
    return;
  }
  if (role_ != Role::Leader || m.term != term()) return;
  auto it = progress_.find(from);
  if (it == progress_.end()) return;
  Progress& p = it->second;
  p.last_ack = env_.now();
  p.inflight = false;
  p.snapshot_sent.reset();
  if (m.index > last_index()) {
    ++stats_.rejected;
    return;
  }
  p.match = std::max(p.match, m.index);
  p.next = std::max(p.next, p.match + 1);
  advance_commit();
  if (role_ == Role::Leader && progress_.count(from) && p.next <= last_index()) send_append(from, false);
}

void RaftNode::on_client_request(PeerId from, RaftMessage& m) {
  if (role_ == Role::Leader) {
    const PendingClient client{from, m.request_id, term()};
    append_command(hooks_.stamp_client_command ? hooks_.stamp_client_command(from, std::move(m.data)) : std::move(m.data),
                   &client);
    return;
  }
  RaftMessage reply;
  reply.kind = MessageKind::ClientReply;
  reply.request_id = m.request_id;
  reply.status = ClientStatus::NotLeader;
  reply.leader = leader_;
  send(from, reply);
}

void RaftNode::fail_pending_clients() {
  for (const auto& [index, c] : pending_) {
    RaftMessage reply;
    reply.kind = MessageKind::ClientReply;
    reply.request_id = c.request_id;
    reply.status = ClientStatus::NotLeader;
    send(c.peer, reply);
  }
  pending_.clear();
}

// ---------------------------------------------------------------------------------------------
// Replication (leader)

std::optional<Index> RaftNode::propose(Bytes command) {
  if (role_ != Role::Leader) return std::nullopt;
  return append_command(std::move(command), nullptr);
}

Index RaftNode::append_command(Bytes command, const PendingClient* client) {
  storage_.append({term(), EntryType::Command, std::move(command)});
  const Index index = last_index();
  if (client) pending_[index] = *client;
  for (auto& [peer, p] : progress_)
    if (!p.inflight) send_append(peer, false);
  advance_commit();
  return index;
}

void RaftNode::broadcast_append(bool heartbeat) {
  std::vector<PeerId> peers;
  for (const auto& [peer, p] : progress_) peers.push_back(peer);
  for (PeerId peer : peers) send_append(peer, heartbeat);
}

void RaftNode::send_append(PeerId peer, bool heartbeat) {
  Progress& p = progress_.at(peer);
  const Snapshot& snap = storage_.snapshot();
  const Seconds now = env_.now();
  RaftMessage m;
  m.term = term();
  if (p.next <= snap.last_index) {
    // The entries it needs are compacted away: send the snapshot, at most once per election
    // timeout (a lost one is sent again), and plain heartbeats meanwhile.
    if (!p.snapshot_sent || now - *p.snapshot_sent >= cfg_.election_timeout_min) {
      m.kind = MessageKind::InstallSnapshot;
      m.last_index = snap.last_index;
      m.last_term = snap.last_term;
      m.config = snap.config;
      m.data = snap.data;
      p.snapshot_sent = now;
      p.inflight = true;
      ++stats_.snapshots_sent;
      send(peer, std::move(m));
      return;
    }
    if (!heartbeat) return;
    m.kind = MessageKind::AppendEntries;
    m.prev_index = snap.last_index;
    m.prev_term = snap.last_term;
    m.leader_commit = commit_;
    send(peer, std::move(m));
    return;
  }
  m.kind = MessageKind::AppendEntries;
  m.prev_index = p.next - 1;
  m.prev_term = *term_at(m.prev_index);
  m.leader_commit = commit_;
  std::size_t bytes = 0;
  for (Index i = p.next; i <= last_index() && m.entries.size() < cfg_.max_entries_per_message; ++i) {
    const LogEntry& e = storage_.entry(i);
    if (!m.entries.empty() && bytes + e.data.size() > cfg_.max_bytes_per_message) break;
    bytes += e.data.size();
    m.entries.push_back(e);
  }
  p.inflight = true;
  send(peer, std::move(m));
}

void RaftNode::advance_commit() {
  if (role_ != Role::Leader) return;
  std::vector<Index> matches;
  for (PeerId member : config_.members) {
    if (member == self()) {
      matches.push_back(last_index());
    } else {
      auto it = progress_.find(member);
      matches.push_back(it == progress_.end() ? 0 : it->second.match);
    }
  }
  if (matches.empty()) return;
  std::sort(matches.begin(), matches.end(), std::greater<>());
  const Index majority = matches[config_.quorum() - 1];
  // Only entries of the current term are committed by counting replicas (Raft §5.4.2).
  if (majority > commit_ && term_at(majority) == term()) {
    commit_ = majority;
    apply_committed();
  }
}

void RaftNode::apply_committed() {
  while (applied_ < commit_) {
    ++applied_;
    const LogEntry& e = storage_.entry(applied_);
    Bytes result;
    if (e.type == EntryType::Command) result = machine_.apply(e.data);
    if (hooks_.on_apply) hooks_.on_apply(applied_, e, result);
    if (role_ == Role::Leader) {
      auto it = pending_.find(applied_);
      if (it != pending_.end()) {
        if (it->second.term == e.term) {
          RaftMessage reply;
          reply.kind = MessageKind::ClientReply;
          reply.request_id = it->second.request_id;
          reply.status = ClientStatus::Ok;
          reply.leader = self();
          reply.data = std::move(result);
          send(it->second.peer, std::move(reply));
        }
        pending_.erase(it);
      }
    }
  }
  maybe_compact();
  // A leader that removed itself leads until that change commits, then steps down.
  if (role_ == Role::Leader && config_index_ <= commit_ && !config_.contains(self())) {
    become_follower(term(), std::nullopt);
  }
}

void RaftNode::maybe_compact() {
  if (cfg_.snapshot_threshold == 0) return;
  const Snapshot& s = storage_.snapshot();
  if (applied_ - s.last_index < cfg_.snapshot_threshold) return;
  Snapshot next{applied_, *term_at(applied_), config_at(applied_), machine_.snapshot()};
  storage_.save_snapshot(std::move(next));
  ++stats_.compactions;
}

// ---------------------------------------------------------------------------------------------
// Membership (leader)

bool RaftNode::can_change_membership() const {
  // One change at a time, and only once this term has committed an entry (which rules out the
  // single-server change bug of the dissertation's first version).
  return role_ == Role::Leader && config_index_ <= commit_ && commit_ >= term_start_;
}

void RaftNode::append_config(Configuration config) {
  storage_.append({term(), EntryType::Config, encode_config(config)});
  set_config(std::move(config), last_index());
  broadcast_append(false);
  advance_commit();
}

bool RaftNode::add_member(PeerId peer) {
  if (!can_change_membership() || config_.contains(peer) || config_.size() >= cfg_.limits.max_members) return false;
  append_config(config_.with(peer));
  return true;
}

bool RaftNode::remove_member(PeerId peer) {
  if (!can_change_membership() || !config_.contains(peer) || config_.size() == 1) return false;
  append_config(config_.without(peer));
  return true;
}

void RaftNode::manage_membership() {
  if (!can_change_membership()) return;
  const Seconds now = env_.now();
  // 1. Remove the member silent for longest, once it has been silent for replace_after.
  if (cfg_.replace_after > 0 && now - leader_since_ >= cfg_.replace_after) {
    std::optional<PeerId> lost;
    Seconds oldest = now - cfg_.replace_after;
    for (const auto& [peer, p] : progress_) {
      if (config_.contains(peer) && p.last_ack <= oldest) {
        oldest = p.last_ack;
        lost = peer;
      }
    }
    if (lost && remove_member(*lost)) {
      passed_over_[*lost] = now + cfg_.candidate_retry_after;
      ++stats_.replicas_removed;
      return;
    }
  }
  // 2. Grow toward the target size with the next-closest candidate, caught up as a learner
  //    (replicated to, not counted) before it becomes a voting member.
  if (config_.size() >= cfg_.target_size) {
    if (learner_) {
      progress_.erase(*learner_);
      learner_.reset();
    }
    return;
  }
  if (learner_) {
    Progress& p = progress_.at(*learner_);
    if (p.match > 0 && p.match + cfg_.max_entries_per_message >= last_index()) {
      const PeerId peer = *learner_;
      if (add_member(peer)) ++stats_.replicas_added;
    } else if (now - learner_since_ >= cfg_.catch_up_timeout ||
               (cfg_.replace_after > 0 && now - p.last_ack >= cfg_.replace_after)) {
      passed_over_[*learner_] = now + cfg_.candidate_retry_after;
      progress_.erase(*learner_);
      learner_.reset();
    }
    return;
  }
  for (PeerId c : candidates_) {
    if (c == self() || config_.contains(c)) continue;
    auto skip = passed_over_.find(c);
    if (skip != passed_over_.end()) {
      if (now < skip->second) continue;
      passed_over_.erase(skip);
    }
    learner_ = c;
    learner_since_ = now;
    Progress p;
    p.next = last_index() + 1;
    p.last_ack = now;
    progress_[c] = p;
    send_append(c, false);
    return;
  }
}

}  // namespace swarmlab::core::raft
