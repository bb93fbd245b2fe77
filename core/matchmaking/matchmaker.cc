#include "core/matchmaking/matchmaker.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "core/matchmaking/declaration.h"
#include "core/matchmaking/group_key.h"
#include "core/wire.h"

namespace swarmlab::core::matchmaking {

namespace {
constexpr Seconds kInfinity = std::numeric_limits<double>::infinity();

bool earlier(Seconds a_exp, PeerId a, Seconds b_exp, PeerId b) { return a_exp < b_exp || (a_exp == b_exp && a < b); }
}  // namespace

Matchmaker::Matchmaker(Environment& env, dht::DhtNode& dht, MatchmakingConfig config)
    : env_(env), dht_(dht), config_(std::move(config)), bits_(config_.initial_bits) {
  (void)group_key(config_.prefix, bits_);  // validates the bits
  if (config_.target_group_size < 2) throw std::invalid_argument("matchmaking: target group size must be at least 2");
  if (config_.min_group_size < 2 || config_.min_group_size > config_.target_group_size)
    throw std::invalid_argument("matchmaking: min group size must be in [2, target group size]");
  if (!(config_.min_matchmaking_time > 0) || !(config_.request_timeout > 0) || !(config_.search_period > 0))
    throw std::invalid_argument("matchmaking: times must be positive");
}

Matchmaker::~Matchmaker() {
  *alive_ = false;
  for (TimerHandle t : {give_up_timer_, deadline_timer_, due_timer_, request_timer_, fetch_timer_}) env_.cancel(t);
}

std::string Matchmaker::current_key() const { return group_key(config_.prefix, bits_); }

void Matchmaker::send(PeerId to, const MatchmakingMessage& m) { env_.send(to, Message{encode(m), 0}); }

// ---------------------------------------------------------------------------------------------
// Starting and stopping

void Matchmaker::look_for_group(GroupCallback done, Seconds timeout, Seconds due) {
  if (looking_) throw std::logic_error("matchmaking: already looking for a group");
  looking_ = true;
  giving_up_ = false;
  done_ = std::move(done);
  candidates_.clear();
  asked_.clear();
  suggested_.reset();
  if (std::isfinite(timeout)) give_up_timer_ = env_.schedule(std::max(0.0, timeout), [this] {
      give_up_timer_ = 0;
      give_up();
    });
  empty_fetches_ = 0;
  if (config_.client_mode) return fetch();
  // The first read waits for our own declaration to be stored. Peers usually start looking at
  // nearly the same moment, so a read at once found nobody and, for a key nobody holds, asked
  // every one of the k closest nodes (the whole DHT of a small collaboration) - half of all DHT
  // requests in the ALBERT runs. Once ours is stored, a read finds it on the replicas and stops.
  declare(due, [this, alive = alive_] {
    if (*alive) fetch();
  });
}

void Matchmaker::cancel() {
  if (!looking_) return;
  if (leader_) send(*leader_, make_message(MessageKind::Leave, request_id_));
  disband_followers(std::nullopt);
  finish(std::nullopt);
}

void Matchmaker::give_up() {
  if (!looking_) return;
  if (following()) {  // our leader begins by its expiration: wait for it, then stop
    giving_up_ = true;
    return;
  }
  if (!config_.client_mode && followers_.size() + 1 >= config_.min_group_size) {
    if (requesting()) {
      send(*leader_, make_message(MessageKind::Leave, request_id_));
      env_.cancel(request_timer_);
      leader_.reset();
    }
    begin_group();
    return;
  }
  cancel();
}

void Matchmaker::finish(std::optional<Group> group) {
  looking_ = false;
  giving_up_ = false;
  for (TimerHandle t : {give_up_timer_, deadline_timer_, due_timer_, request_timer_, fetch_timer_}) env_.cancel(t);
  give_up_timer_ = deadline_timer_ = due_timer_ = request_timer_ = fetch_timer_ = 0;
  withdraw();
  leader_.reset();
  accepted_ = false;
  followers_.clear();
  if (group) {
    ++stats_.groups;
    last_group_size_ = group->size();
    // A member of our last group missing from this one is lost too (a peer outside the round that
    // dropped it hears of it this way); a full group, or a lost peer back in one, undoes it.
    std::set<PeerId> members;
    for (const auto& m : group->members) members.insert(m.peer);
    for (const PeerId p : last_members_)
      if (!members.count(p)) lost_.insert(p);
    if (group->size() >= config_.target_group_size) lost_.clear();
    for (const PeerId p : members) lost_.erase(p);
    last_members_ = std::move(members);
    // The shift register: a distinct index per member, the same at every member.
    const auto me = group->index_of(env_.self());
    const auto indices = member_indices(group->group_id, group->size(), config_.target_group_size);
    bits_ = next_bits(bits_, indices[*me], index_bits(std::max(config_.target_group_size, group->size())));
  } else {
    ++stats_.failures;
  }
  GroupCallback done = std::move(done_);
  done_ = nullptr;
  if (done) done(std::move(group));
}

// ---------------------------------------------------------------------------------------------
// Declarations

void Matchmaker::store_declaration(const std::string& key, Seconds expiration, bool looking,
                                   std::function<void()> stored) {
  // A withdrawal must outlive (and so replace) the declaration it cancels.
  const Seconds dht_expiration = looking ? expiration : std::nextafter(expiration, kInfinity);
  dht_.store(key, peer_subkey(env_.self()), encode_declaration({expiration, looking}), dht_expiration,
             [stored = std::move(stored)](const dht::StoreResult&) {
               if (stored) stored();
             });
}

void Matchmaker::declare(Seconds due, std::function<void()> stored) {
  declared_key_ = current_key();
  declared_expiration_ = std::max(env_.now() + config_.min_matchmaking_time, due);
  due_on_declare_ = due <= env_.now();
  due_ = due;
  env_.cancel(due_timer_);
  due_timer_ = 0;
  // Once the step is due, a group holding everyone expected begins (leader_check) before the
  // declaration expires.
  if (due > env_.now() && due < declared_expiration_) due_timer_ = env_.schedule_at(due, [this] {
      due_timer_ = 0;
      leader_check();
    });
  extended_ = 0;
  store_declaration(declared_key_, declared_expiration_, true, std::move(stored));
  env_.cancel(deadline_timer_);
  deadline_timer_ = env_.schedule_at(declared_expiration_, [this] {
    deadline_timer_ = 0;
    on_deadline();
  });
}

void Matchmaker::withdraw() {
  env_.cancel(deadline_timer_);
  env_.cancel(due_timer_);
  deadline_timer_ = due_timer_ = 0;
  if (declared_expiration_ == 0) return;
  if (declared_expiration_ > env_.now()) store_declaration(declared_key_, declared_expiration_, false);
  declared_expiration_ = 0;
}

// ---------------------------------------------------------------------------------------------
// As a leader

void Matchmaker::on_deadline() {
  if (!looking_ || following()) return;
  leader_check();
  search();
}

void Matchmaker::leader_check() {
  if (!looking_ || config_.client_mode || following() || declared_expiration_ == 0) return;
  const std::size_t members = followers_.size() + 1;
  const bool full = members >= config_.target_group_size;
  const bool expired = env_.now() >= declared_expiration_;
  // The step was already due when we declared (averaging back to back, or catching up): nothing is
  // gained by waiting once everyone of the last group is back.
  const bool back = due_on_declare_ && last_group_size_ >= 2 && members >= last_group_size_;
  // The step is due and everyone the caller expects to average it is in, and the collaboration has
  // lost a member since its groups were last full: nobody else is coming, so waiting for the
  // expiration gains nothing. (Before the step is due the group stays open for
  // peers that are not expected yet, such as one finishing its state download.) This is what keeps a collaboration that lost a member (no longer
  // expected) from waiting out every declaration, since its groups can never be full again.
  // Only after the collaboration lost a member (peer_lost): otherwise a peer missing from the
  // expectation is more likely one whose record this peer has not read yet.
  const bool everyone =
      !lost_.empty() && expected_ >= config_.min_group_size && members >= expected_ && env_.now() >= due_;
  if (!full && !expired && !back && !everyone) return;
  // Expired with fewer than expected: peers a little late are likely on their way. Hold the group
  // open a while (accepted followers wait for Begin that much longer too).
  if (!full && !back && expected_ > members && extended_ < config_.max_extension) {
    const Seconds more = std::min(config_.request_timeout, config_.max_extension - extended_);
    note([&] { return std::string("holding " + std::to_string(members) + " of " + std::to_string(expected_) + " expected open " + std::to_string(more) + " s longer"); });
    extended_ += more;
    declared_expiration_ += more;
    store_declaration(declared_key_, declared_expiration_, true);
    env_.cancel(deadline_timer_);
    deadline_timer_ = env_.schedule(more, [this] {
      deadline_timer_ = 0;
      on_deadline();
    });
    return;
  }
  // Our own join request is still open: decide once it is answered, so that we never end up in
  // two groups (the leader we asked may accept us meanwhile).
  if (requesting()) return;
  // At most half of the members this peer expects: such a group would take the step for a
  // minority, and every peer outside it would then be a step behind and load its state (at 256
  // peers, a group of 5 stepped ahead of one of 241, which all downloaded from those 5;
  // docs/interpretations.md §32). It declares again, and its followers look for the larger group.
  const bool majority = expected_ == 0 || 2 * members > expected_;
  if (full || (members >= config_.min_group_size && majority && worth_averaging())) {
    begin_group();
    return;
  }
  if (members >= config_.min_group_size) note([] { return std::string("nothing to average in this group: declaring again"); });
  disband_followers(std::nullopt);
  declare();
}

bool Matchmaker::worth_averaging() const {
  if (!config_.worth_averaging) return true;
  std::vector<Attachment> gathered{gathered_};
  for (const Follower& f : followers_) gathered.push_back(f.gathered);
  return config_.worth_averaging(gathered);
}

void Matchmaker::begin_group() {
  Group group;
  group.group_id = env_.rng().next_u64();
  group.leader = env_.self();
  group.members.push_back({env_.self(), config_.client_mode, gathered_});
  for (const Follower& f : followers_) group.members.push_back({f.peer, f.client_mode, f.gathered});
  // The order decides who reduces which span; shuffled so the leader is not always first.
  Rng order(group.group_id, 0x6F72);
  for (std::size_t i = group.members.size(); i > 1; --i) std::swap(group.members[i - 1], group.members[order.below(i)]);
  for (const Follower& f : followers_) {
    MatchmakingMessage m = make_message(MessageKind::Begin, f.request_id);
    m.group_id = group.group_id;
    m.leader = group.leader;
    m.members = group.members;
    send(f.peer, m);
  }
  ++stats_.groups_led;
  note([&] { return std::string("leading a group of " + std::to_string(group.members.size())); });
  followers_.clear();
  finish(std::move(group));
}

void Matchmaker::disband_followers(std::optional<PeerId> suggestion) {
  for (const Follower& f : followers_) {
    MatchmakingMessage m = make_message(MessageKind::Disband, f.request_id);
    m.suggested_leader = suggestion;
    send(f.peer, m);
  }
  followers_.clear();
}

void Matchmaker::on_join_request(PeerId from, const MatchmakingMessage& m) {
  JoinStatus status = JoinStatus::Accepted;
  std::optional<PeerId> suggestion;
  const bool duplicate =
      std::any_of(followers_.begin(), followers_.end(), [from](const Follower& f) { return f.peer == from; });
  if (!looking_) {
    status = JoinStatus::NotLookingForGroup;
  } else if (m.schema_hash != config_.schema_hash) {
    status = JoinStatus::BadSchemaHash;
  } else if (m.group_key != current_key()) {
    status = JoinStatus::BadGroupKey;
  } else if (config_.client_mode || following() || declared_expiration_ == 0) {
    status = JoinStatus::NotALeader;
    if (following()) suggestion = leader_;
  } else if (!m.client_mode && earlier(m.expiration, from, declared_expiration_ - extended_, env_.self())) {
    // Only a later declaration may follow us (hivemind's leaders check the same). Followers pick
    // leaders from what they last read, which can be a declaration since renewed: after a leader
    // died, its followers all declared anew at once and, each still seeing the others' old
    // declarations, asked each other, so that two could accept each other.
    status = JoinStatus::DeclaredLater;
  } else if (duplicate) {
    status = JoinStatus::DuplicatePeerId;
  } else if (followers_.size() + 1 >= config_.target_group_size) {
    status = JoinStatus::GroupFull;
  }
  MatchmakingMessage reply = make_message(MessageKind::JoinReply, m.request_id);
  reply.status = status;
  reply.suggested_leader = suggestion;
  if (status == JoinStatus::Accepted) reply.leader_expiration = declared_expiration_;
  ++stats_.replies_sent[status];
  send(from, reply);
  if (status == JoinStatus::Accepted) {
    followers_.push_back({from, m.request_id, m.client_mode, m.gathered});
    leader_check();
  }
}

void Matchmaker::on_leave(PeerId from, const MatchmakingMessage& m) {
  std::erase_if(followers_, [&](const Follower& f) { return f.peer == from && f.request_id == m.request_id; });
}

// ---------------------------------------------------------------------------------------------
// As a follower

void Matchmaker::search() {
  if (!looking_ || leader_ || giving_up_) return;
  if (!config_.client_mode && followers_.size() + 1 >= config_.target_group_size) return;
  // A leader whose followers wait on it does not start a request it might still be waiting on at
  // its own expiration: they would time out.
  if (!followers_.empty() && env_.now() + config_.request_timeout > declared_expiration_) return;
  if (const auto c = next_candidate()) {
    send_join(*c);
    return;
  }
  schedule_fetch();
}

std::optional<Matchmaker::Candidate> Matchmaker::next_candidate() {
  const Seconds now = env_.now();
  while (suggested_) {
    const PeerId s = *suggested_;
    suggested_.reset();
    if (s == env_.self() || asked_.count(s)) continue;
    Seconds expiration = now;  // unknown until it is declared in our next read
    for (const Candidate& c : candidates_)
      if (c.peer == s) expiration = c.expiration;
    return Candidate{expiration, s};
  }
  for (const Candidate& c : candidates_) {
    if (c.peer == env_.self() || c.expiration <= now) continue;
    // Only earlier peers may lead us; the candidates are sorted, so none is left.
    if (!config_.client_mode && !earlier(c.expiration, c.peer, declared_expiration_, env_.self())) break;
    const auto asked = asked_.find(c.peer);
    if (asked != asked_.end() && asked->second >= c.expiration) continue;  // asked during this declaration
    return c;
  }
  return std::nullopt;
}

void Matchmaker::send_join(const Candidate& c) {
  leader_ = c.peer;
  accepted_ = false;
  request_id_ = next_request_id_++;
  asked_[c.peer] = c.expiration;
  MatchmakingMessage m = make_message(MessageKind::JoinRequest, request_id_);
  m.schema_hash = config_.schema_hash;
  m.group_key = current_key();
  m.expiration = declared_expiration_;
  m.client_mode = config_.client_mode;
  m.gathered = gathered_;
  ++stats_.join_requests_sent;
  note([&] { return std::string("asking peer " + std::to_string(c.peer) + " to lead"); });
  send(c.peer, m);
  request_timer_ = env_.schedule(config_.request_timeout, [this] {
    request_timer_ = 0;
    ++stats_.request_timeouts;
    note([&] { return std::string("peer " + std::to_string(*leader_) + " did not answer"); });
    lost_leader(true);
  });
}

void Matchmaker::on_join_reply(PeerId from, const MatchmakingMessage& m) {
  if (!requesting() || from != *leader_ || m.request_id != request_id_) {
    ++stats_.unexpected;
    return;
  }
  ++stats_.replies_received[m.status];
  note([&] { return std::string("peer " + std::to_string(from) + (m.status == JoinStatus::Accepted ? " accepted" : " refused")); });
  env_.cancel(request_timer_);
  request_timer_ = 0;
  if (m.status == JoinStatus::Accepted) {
    accepted_ = true;
    leader_expiration_ = m.leader_expiration;
    // We follow now: our own followers go to our leader, and we stop being a candidate.
    disband_followers(leader_);
    withdraw();
    const Seconds wait = std::max(0.0, leader_expiration_ - env_.now()) + config_.request_timeout + config_.max_extension;
    request_timer_ = env_.schedule(wait, [this] {
      request_timer_ = 0;
      ++stats_.begin_timeouts;
      note([&] { return std::string("leader " + std::to_string(*leader_) + " did not begin"); });
      lost_leader(true);
    });
    return;
  }
  leader_.reset();
  if (m.status == JoinStatus::NotALeader && m.suggested_leader) suggested_ = m.suggested_leader;
  leader_check();
  search();
}

void Matchmaker::lost_leader(bool tell_leader) {
  if (!leader_) return;
  if (tell_leader) send(*leader_, make_message(MessageKind::Leave, request_id_));
  env_.cancel(request_timer_);
  request_timer_ = 0;
  const bool was_following = accepted_;
  leader_.reset();
  accepted_ = false;
  if (!looking_) return;
  if (giving_up_) {
    disband_followers(std::nullopt);
    finish(std::nullopt);
    return;
  }
  if (was_following && !config_.client_mode) declare();  // we withdrew when it accepted us
  leader_check();
  search();
}

void Matchmaker::on_begin(PeerId from, const MatchmakingMessage& m) {
  if (!following() || from != *leader_ || m.request_id != request_id_) {
    ++stats_.unexpected;
    return;
  }
  Group group{m.group_id, m.leader, m.members};
  std::set<PeerId> seen;
  bool valid = m.leader == from && group.index_of(env_.self()) && group.index_of(from);
  for (const GroupMember& g : group.members) valid = valid && seen.insert(g.peer).second;
  if (!valid) {  // a leader that sends nonsense is as good as gone
    ++stats_.malformed;
    lost_leader(true);
    return;
  }
  finish(std::move(group));
}

void Matchmaker::on_disband(PeerId from, const MatchmakingMessage& m) {
  if (!following() || from != *leader_ || m.request_id != request_id_) {
    ++stats_.unexpected;
    return;
  }
  ++stats_.disbanded;
  if (m.suggested_leader) suggested_ = m.suggested_leader;
  lost_leader(false);
}

// ---------------------------------------------------------------------------------------------
// Reading the declared peers

void Matchmaker::fetch() {
  if (fetch_in_flight_ || !looking_) return;
  fetch_in_flight_ = true;
  last_fetch_ = env_.now();
  ++stats_.fetches;
  dht::GetOptions options;
  options.sufficient_responses = config_.fetch_responses;
  dht_.get(
      current_key(),
      [this, alive = alive_](std::optional<dht::Record> record, const dht::LookupStats&) {
        if (!*alive) return;
        fetch_in_flight_ = false;
        if (!looking_) return;
        candidates_.clear();
        if (record && record->is_dictionary()) {
          for (const auto& [subkey, timed] : record->dictionary()) {
            try {
              const PeerId peer = decode_peer_subkey(subkey);
              const Declaration d = decode_declaration(timed.value);
              if (d.looking) candidates_.push_back({d.expiration, peer});
            } catch (const DecodeError&) {
              ++stats_.malformed;
            }
          }
        }
        std::sort(candidates_.begin(), candidates_.end(), [](const Candidate& a, const Candidate& b) {
          return earlier(a.expiration, a.peer, b.expiration, b.peer);
        });
        search();
      },
      options);
}

void Matchmaker::schedule_fetch() {
  if (fetch_in_flight_ || fetch_timer_ != 0) return;
  // Declarations made at the same moment as ours are being stored right now: read again soon, then
  // back off to the search period.
  const Seconds period = std::min(config_.search_period, config_.first_search_delay * (1 << std::min(empty_fetches_++, 8)));
  fetch_timer_ = env_.schedule_at(last_fetch_ + period, [this] {
    fetch_timer_ = 0;
    fetch();
  });
}

// ---------------------------------------------------------------------------------------------
// Transport

void Matchmaker::handle(PeerId from, const Message& message) {
  MatchmakingMessage m;
  try {
    m = decode(message.bytes);
  } catch (const DecodeError&) {
    ++stats_.malformed;
    return;
  }
  switch (m.kind) {
    case MessageKind::JoinRequest: on_join_request(from, m); break;
    case MessageKind::JoinReply: on_join_reply(from, m); break;
    case MessageKind::Begin: on_begin(from, m); break;
    case MessageKind::Disband: on_disband(from, m); break;
    case MessageKind::Leave: on_leave(from, m); break;
  }
}

void Matchmaker::on_link_failure(PeerId peer) {
  const bool follower = std::erase_if(followers_, [peer](const Follower& f) { return f.peer == peer; }) > 0;
  if (leader_ && *leader_ == peer) {
    ++stats_.leader_failures;
    lost_leader(false);
  }
  // A member who crashed will not join: a leader that waited for it held its group open to its
  // expiration and the extension, 8 s after each departure at 256 peers (docs/interpretations.md
  // §32). Only its contacts hear of it (its leader, followers and round partners; a sender is no
  // contact of another sender, §33).
  if (follower || last_members_.count(peer)) {
    peer_lost(peer);
    if (config_.member_gone) config_.member_gone(peer);
    leader_check();
  }
}

}  // namespace swarmlab::core::matchmaking
