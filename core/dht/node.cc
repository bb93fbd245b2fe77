#include "core/dht/node.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace swarmlab::core::dht {

struct DhtNode::Lookup {
  Lookup(NodeId target, std::size_t k, std::size_t alpha) : shortlist(target, k, alpha) {}
  bool find_value = false;
  GetOptions options;
  Shortlist shortlist;
  Seconds started = 0;
  LookupStats stats;
  std::optional<Record> found;  // FIND_VALUE: the merge of every record returned so far
  std::size_t value_responses = 0;
  int value_hop = -1;  // hop of the first node that returned the value (0: this node holds it)
  // A narrowed FIND_VALUE lookup (config.h): its requests in flight and when each was sent; those
  // older than slow_request_s no longer hold a slot. One timer at a time re-pumps the lookup when
  // the next of them turns slow.
  struct Sent {
    NodeId asked;
    Seconds at = 0;
    bool slow = false;
  };
  std::vector<Sent> sent_at;
  bool slow_timer = false;
  LookupDone done;
};

struct DhtNode::StoreOp {
  NodeId key;
  std::optional<Bytes> subkey;
  TimedValue value;
  std::vector<Contact> targets;  // closest first; those past the first `wanted` are spares
  std::size_t wanted = 0;        // remote replicas still to fill
  std::size_t next = 0;
  std::size_t outstanding = 0;
  std::size_t answered = 0;
  std::size_t accepted = 0;
  LookupStats lookup;
  StoreCallback done;
};

DhtNode::DhtNode(Environment& env, NodeId id, DhtConfig config)
    : env_(env),
      id_(id),
      config_(config),
      limits_(WireLimits::from(config)),
      table_(id, config.bucket_size, config.replacement_cache_size, config.bucket_ping_interval_s),
      storage_(ValueStore::from(config)),
      blacklist_(config.blacklist_base_s, config.blacklist_backoff, config.blacklist_max_exponent) {
  if (!valid_id_bits(config.id_bits)) throw std::invalid_argument("DhtConfig: id_bits must be 160 or 256");
  if (!id.fits(config.id_bits)) throw std::invalid_argument("DhtNode: the node id is wider than DhtConfig::id_bits");
}

DhtNode::~DhtNode() { *alive_ = false; }

void DhtNode::later(Seconds delay, std::function<void()> fn) {
  env_.schedule(delay, [alive = alive_, fn = std::move(fn)] {
    if (*alive) fn();
  });
}

void DhtNode::later_at(Seconds due, std::function<void()> fn) {
  env_.schedule_at(due, [alive = alive_, fn = std::move(fn)] {
    if (*alive) fn();
  });
}

// ---------------------------------------------------------------------------------------------
// Messaging

DhtMessage DhtNode::header(MessageKind kind, std::uint64_t request_id) const {
  DhtMessage m;
  m.kind = kind;
  m.sender_is_client = config_.client_mode;
  m.id_bits = config_.id_bits;
  m.request_id = request_id;
  m.sender = id_;
  m.sender_time = env_.now();
  return m;
}

void DhtNode::send(PeerId to, const DhtMessage& m, const Record* record) {
  Message msg;
  encode(m, msg.bytes, record);
  ++stats_.messages_sent;
  stats_.bytes_sent += msg.wire_size();
  env_.send(to, std::move(msg));
}

bool DhtNode::send_request(PeerId to, std::optional<NodeId> expected, DhtMessage m, ReplyHandler on_reply,
                           std::uint64_t lookup_id) {
  if (to == env_.self() || blacklist_.is_banned(to, env_.now())) return false;
  const std::uint64_t rid = next_request_id_++;
  m.request_id = rid;
  Pending& p = pending_[rid];
  p.peer = to;
  p.expected = expected;
  p.expect = response_to(m.kind);
  p.on_reply = std::move(on_reply);
  p.lookup = lookup_id;
  p.sent = env_.now();
  p.deadline = env_.now() + config_.request_timeout_s;
  arm_timeout();
  ++stats_.requests_sent;
  if (m.kind == MessageKind::FindNodeRequest || m.kind == MessageKind::FindValueRequest) ++stats_.find_requests;
  if (m.kind == MessageKind::StoreRequest) ++stats_.store_requests;
  send(to, m);
  return true;
}

void DhtNode::fail_request(std::uint64_t request_id, bool timed_out) {
  auto it = pending_.find(request_id);
  if (it == pending_.end()) return;
  Pending p = std::move(it->second);
  pending_.erase(it);
  ++stats_.requests_failed;
  if (timed_out && last_heard_ && last_heard_(p.peer) > p.sent) {
    ++stats_.requests_busy;  // alive, only slow to answer behind other traffic
  } else {
    // hivemind: a node that fails to answer leaves the routing table and is banned for a while.
    blacklist_.register_failure(p.peer, env_.now());
    if (p.expected) table_.remove(*p.expected);
  }
  p.on_reply(nullptr, p);
}

void DhtNode::arm_timeout() {
  if (timeout_armed_ || pending_.empty()) return;
  timeout_armed_ = true;
  later_at(pending_.begin()->second.deadline, [this] {
    timeout_armed_ = false;
    expire_requests();
  });
}

void DhtNode::expire_requests() {
  while (!pending_.empty() && pending_.begin()->second.deadline <= env_.now() + kTimerSlack) {
    fail_request(pending_.begin()->first, true);
  }
  arm_timeout();
}

void DhtNode::on_link_failure(PeerId peer) {
  std::vector<std::uint64_t> failed;
  for (const auto& [rid, p] : pending_)
    if (p.peer == peer) failed.push_back(rid);
  for (std::uint64_t rid : failed) fail_request(rid);
}

void DhtNode::suspect(PeerId peer) {
  if (peer == env_.self()) return;
  on_link_failure(peer);
  blacklist_.register_failure(peer, env_.now());  // no new failure if a failed request just banned it
  // Out of the routing table too, as after a timeout: once the ban ends, only a node that still
  // lists it leads a lookup back to it.
  std::vector<NodeId> ids;
  table_.for_each([&](const RoutingTable::Entry& e) {
    if (e.contact.peer == peer) ids.push_back(e.contact.id);
  });
  for (const NodeId& id : ids) table_.remove(id);
}

bool DhtNode::receive(PeerId from, std::span<const std::uint8_t> bytes) {
  ++stats_.messages_received;
  stats_.bytes_received += bytes.size() + kFrameHeaderBytes;
  // A reply to a lookup that has finished updates only the routing table: its record and contacts
  // are checked but not built.
  ReplyBody body = ReplyBody::Keep;
  if (const auto rid = response_request_id(bytes)) {
    const auto it = pending_.find(*rid);
    if (it != pending_.end() && it->second.lookup != 0 && !lookups_.count(it->second.lookup)) body = ReplyBody::CheckOnly;
  }
  DhtMessage m;
  try {
    m = decode(bytes, limits_, body);
  } catch (const DecodeError&) {
    ++stats_.dropped_malformed;
    return false;
  }
  if (!(std::abs(m.sender_time - env_.now()) <= config_.clock_skew_tolerance_s)) {
    ++stats_.dropped_clock_skew;
    return false;
  }
  if (m.sender == id_ || from == env_.self()) {
    ++stats_.dropped_unexpected;
    return false;
  }
  if (is_request(m.kind)) {
    answer(from, m);
    return true;
  }
  auto it = pending_.find(m.request_id);
  if (it == pending_.end() || it->second.peer != from || it->second.expect != m.kind) {
    ++stats_.dropped_unexpected;
    return false;
  }
  Pending p = std::move(it->second);
  pending_.erase(it);
  // Someone else now answers at that address: the entry we had for it is stale.
  if (p.expected && *p.expected != m.sender) table_.remove(*p.expected);
  heard_from(from, m);
  p.on_reply(&m, p);
  return true;
}

void DhtNode::heard_from(PeerId peer, const DhtMessage& m) {
  blacklist_.register_success(peer);
  if (m.sender_is_client) return;
  const RoutingTable::UpdateResult r = table_.update(Contact{m.sender, peer}, env_.now());
  if (!r.ping) return;
  // The bucket is full: keep the old entry unless it fails to answer a ping (fail_request then
  // removes it, which promotes the newcomer from the replacement cache).
  const Contact lru = *r.ping;
  if (send_request(lru.peer, lru.id, header(MessageKind::PingRequest, 0), [](const DhtMessage*, const Pending&) {}))
    ++stats_.liveness_pings;
  else
    table_.remove(lru.id);  // banned: as good as failed
}

void DhtNode::answer(PeerId from, const DhtMessage& request) {
  heard_from(from, request);
  DhtMessage r = header(response_to(request.kind), request.request_id);
  switch (request.kind) {
    case MessageKind::FindNodeRequest:
      table_.closest(request.target, config_.bucket_size, &request.sender, r.contacts);
      break;
    case MessageKind::FindValueRequest:
      table_.closest(request.target, config_.bucket_size, &request.sender, r.contacts);
      return send(from, r, storage_.find(request.target, env_.now()));
    case MessageKind::StoreRequest:
      r.stored = storage_.store(request.target, request.subkey ? &*request.subkey : nullptr, request.value,
                                env_.now(), from);
      break;
    default:
      break;
  }
  send(from, r);
}

// ---------------------------------------------------------------------------------------------
// Iterative lookups

void DhtNode::start_lookup(const NodeId& target, bool find_value, std::size_t window, GetOptions options,
                           std::optional<Record> local, LookupDone done, const std::vector<Contact>* seeds) {
  if (!target.fits(config_.id_bits)) throw std::invalid_argument("DhtNode: a key wider than DhtConfig::id_bits");
  const std::uint64_t id = next_lookup_id_++;
  auto lookup = std::make_unique<Lookup>(target, std::max<std::size_t>(window, 1), config_.parallelism);
  lookup->find_value = find_value;
  lookup->options = options;
  lookup->started = env_.now();
  lookup->done = std::move(done);
  if (local) {
    lookup->found = std::move(local);
    lookup->value_responses = 1;
    lookup->value_hop = 0;
    if (config_.narrow_value_lookups) lookup->shortlist.narrow_window(config_.num_replicas);
  }
  for (const Contact& c : seeds ? *seeds : table_.closest(target, config_.bucket_size)) lookup->shortlist.add(c, 1);
  table_.mark_looked_up(target, env_.now());
  ++stats_.lookups;
  lookups_.emplace(id, std::move(lookup));
  // Start on the next event, so callbacks never run inside the public call that started it.
  later(0, [this, id] { pump(id); });
}

void DhtNode::pump(std::uint64_t lookup_id) {
  auto it = lookups_.find(lookup_id);
  if (it == lookups_.end()) return;
  Lookup& l = *it->second;
  if (l.find_value && l.value_responses >= std::max<std::size_t>(1, l.options.sufficient_responses) &&
      closest_answered(l)) {
    finish_lookup(lookup_id);
    return;
  }
  const MessageKind kind = l.find_value ? MessageKind::FindValueRequest : MessageKind::FindNodeRequest;
  // Narrowed once some node (or this one) returned the value: the lookup is among the replicas.
  const bool narrow = l.find_value && config_.narrow_value_lookups && l.value_responses > 0;
  if (narrow) {
    // Replies holding the value still needed (one more at least: the closest nodes have not all
    // answered, closest_answered).
    const std::size_t wanted = std::max<std::size_t>(1, l.options.sufficient_responses);
    const std::size_t needed = l.value_responses < wanted ? wanted - l.value_responses : 1;
    const auto slow =
        static_cast<std::size_t>(std::count_if(l.sent_at.begin(), l.sent_at.end(), [](const auto& s) { return s.slow; }));
    l.shortlist.set_alpha(std::min(config_.parallelism, needed + slow));
  }
  while (const Shortlist::Candidate* c = l.shortlist.next()) {
    const Contact contact = c->contact(l.shortlist.target());
    DhtMessage m = header(kind, 0);
    m.target = l.shortlist.target();
    const bool sent = send_request(contact.peer, contact.id, std::move(m),
                                   [this, lookup_id](DhtMessage* reply, const Pending& request) {
                                     lookup_reply(lookup_id, *request.expected, reply);
                                   },
                                   lookup_id);
    if (sent) {
      l.shortlist.sent(contact.id);
      ++l.stats.requests;
      if (l.find_value && config_.narrow_value_lookups) l.sent_at.push_back({contact.id, env_.now()});
    } else {
      l.shortlist.failed(contact.id);
      ++l.stats.failures;
    }
  }
  if (l.shortlist.converged()) return finish_lookup(lookup_id);
  if (narrow && !l.slow_timer) {
    // Wake when the oldest request still holding a slot turns slow.
    std::optional<Seconds> oldest;
    for (const auto& s : l.sent_at)
      if (!s.slow && (!oldest || s.at < *oldest)) oldest = s.at;
    if (oldest) {
      l.slow_timer = true;
      // A request sent before the lookup narrowed may be slow already: then at once.
      later_at(*oldest + config_.slow_request_s, [this, lookup_id, oldest = *oldest] {
        auto it = lookups_.find(lookup_id);
        if (it == lookups_.end()) return;
        it->second->slow_timer = false;
        for (auto& s : it->second->sent_at)
          if (s.at <= oldest) s.slow = true;
        pump(lookup_id);
      });
    }
  }
}

bool DhtNode::closest_answered(const Lookup& l) const {
  std::size_t count = l.options.sufficient_responses;
  if (count <= 1) return true;  // Kademlia's FIND_VALUE: the first node that has it
  const NodeId& target = l.shortlist.target();
  bool self_left = l.value_hop == 0;  // this node holds the key: count it where it is that close
  for (const Shortlist::Candidate& c : l.shortlist.candidates()) {
    if (c.state == Shortlist::State::Failed) continue;
    if (self_left && closer(target, id_, c.id(target))) {
      self_left = false;
      if (--count == 0) return true;
    }
    if (c.state != Shortlist::State::Responded) return false;
    if (--count == 0) return true;
  }
  return true;  // fewer nodes known than wanted: every one of them answered
}

void DhtNode::lookup_reply(std::uint64_t lookup_id, const NodeId& asked, DhtMessage* reply) {
  auto it = lookups_.find(lookup_id);
  if (it == lookups_.end()) return;  // finished already; a late reply only refreshed the table
  Lookup& l = *it->second;
  std::erase_if(l.sent_at, [&](const auto& s) { return s.asked == asked; });
  if (!reply) {
    l.shortlist.failed(asked);
    ++l.stats.failures;
    pump(lookup_id);
    return;
  }
  const Shortlist::Candidate* c = l.shortlist.find(asked);
  const int hop = c ? c->hop : 1;
  l.shortlist.responded(asked);
  std::size_t taken = 0;
  for (const Contact& contact : reply->contacts) {
    if (taken++ == config_.bucket_size) break;
    if (contact.id == id_ || contact.peer == env_.self()) continue;
    l.shortlist.add(contact, hop + 1);
  }
  if (l.find_value && reply->record) {
    Record r = std::move(*reply->record);
    if (r.drop_expired(env_.now())) {
      if (!l.found) {
        l.found = std::move(r);
      } else {
        l.found->merge(r);
      }
      if (l.value_hop < 0) l.value_hop = hop;
      ++l.value_responses;
      if (config_.narrow_value_lookups) l.shortlist.narrow_window(config_.num_replicas);
    }
  }
  pump(lookup_id);
}

void DhtNode::finish_lookup(std::uint64_t lookup_id) {
  auto it = lookups_.find(lookup_id);
  if (it == lookups_.end()) return;
  std::unique_ptr<Lookup> l = std::move(it->second);
  lookups_.erase(it);
  l->stats.latency_s = env_.now() - l->started;
  if (l->find_value && l->value_hop >= 0) {
    l->stats.hops = l->value_hop;
  } else {
    int hops = 0;
    for (const auto& c : l->shortlist.candidates())
      if (c.state == Shortlist::State::Responded) {
        hops = c.hop;  // the closest node that answered
        break;
      }
    l->stats.hops = hops;
  }
  l->done(*l);
}

// ---------------------------------------------------------------------------------------------
// Public operations

void DhtNode::bootstrap(std::vector<PeerId> initial, BootstrapCallback done) {
  if (!maintaining_) {
    maintaining_ = true;
    // A random phase keeps thousands of nodes from maintaining in lockstep.
    later(config_.maintenance_period_s * (0.5 + env_.rng().uniform()), [this] { maintenance(); });
  }
  std::sort(initial.begin(), initial.end());
  initial.erase(std::unique(initial.begin(), initial.end()), initial.end());

  struct Join {
    std::size_t outstanding = 0;
    bool any = false;
    BootstrapCallback done;
  };
  auto join = std::make_shared<Join>();
  join->done = std::move(done);
  auto pinged = [this, join] {
    if (!join->any) {
      join->done(false);
      return;
    }
    find_nodes(id_, [this, join](std::vector<Contact>, const LookupStats&) {
      if (config_.refresh_far_buckets_on_join) {
        const int closest = table_.closest_bucket();
        if (closest >= 0)
          for (int i = closest + 1; i < config_.id_bits; ++i) refresh_bucket(i);
      }
      join->done(true);
    });
  };
  for (PeerId p : initial) {
    const bool sent = send_request(p, std::nullopt, header(MessageKind::PingRequest, 0),
                                   [join, pinged](const DhtMessage* reply, const Pending&) {
                                     if (reply) join->any = true;
                                     if (--join->outstanding == 0) pinged();
                                   });
    if (sent) ++join->outstanding;
  }
  if (join->outstanding == 0) later(0, pinged);
}

void DhtNode::store(std::string_view key, Bytes value, Seconds expiration, StoreCallback done) {
  store_id(NodeId::of_key(key, config_.id_bits), std::nullopt, TimedValue{std::move(value), expiration}, std::move(done));
}

void DhtNode::store(std::string_view key, Bytes subkey, Bytes value, Seconds expiration, StoreCallback done) {
  store_id(NodeId::of_key(key, config_.id_bits), std::move(subkey), TimedValue{std::move(value), expiration}, std::move(done));
}

void DhtNode::store_id(const NodeId& key, std::optional<Bytes> subkey, TimedValue value, StoreCallback done) {
  auto op = std::make_shared<StoreOp>();
  op->key = key;
  op->subkey = std::move(subkey);
  op->value = std::move(value);
  op->done = std::move(done);
  if (config_.store_lookup_reuse_s > 0) {
    auto it = replica_sets_.find(key);
    if (it != replica_sets_.end() && env_.now() - it->second.found < config_.store_lookup_reuse_s &&
        it->second.table_version == table_.version()) {
      std::vector<Contact> targets = it->second.closest;
      // Like a lookup, never inside the caller.
      later(0, [this, op, targets = std::move(targets)]() mutable { store_to(op, std::move(targets)); });
      return;
    }
  }
  start_lookup(key, false, config_.num_replicas, {}, std::nullopt, [this, op](Lookup& l) {
    op->lookup = l.stats;
    std::vector<Contact> targets = l.shortlist.closest_responded(config_.bucket_size);
    // A lookup that some node failed to answer may have passed over a replica that was only slow
    // (busy behind a round's gradient parts on the same connection): its set is used once, not kept.
    if (config_.store_lookup_reuse_s > 0 && l.stats.failures == 0) {
      if (replica_sets_.size() >= kMaxReplicaSets) forget_replica_sets(env_.now());
      replica_sets_[op->key] = {targets, env_.now(), table_.version()};
    }
    store_to(op, std::move(targets));
  });
}

void DhtNode::forget_replica_sets(Seconds now) {
  std::erase_if(replica_sets_, [&](const auto& e) { return now - e.second.found >= config_.store_lookup_reuse_s; });
  // Still full (many keys stored within the period): start over rather than keep any order.
  if (replica_sets_.size() >= kMaxReplicaSets) replica_sets_.clear();
}

void DhtNode::store_to(const std::shared_ptr<StoreOp>& op, std::vector<Contact> targets) {
  op->targets = std::move(targets);
  // This node holds a replica itself when it is among the num_replicas closest.
  std::size_t ahead = 0;
  for (const Contact& c : op->targets)
    if (ahead < config_.num_replicas && closer(op->key, c.id, id_)) ++ahead;
  op->wanted = config_.num_replicas;
  if (ahead < config_.num_replicas && op->wanted > 0) {
    --op->wanted;
    if (storage_.store(op->key, op->subkey ? &*op->subkey : nullptr, op->value, env_.now())) ++op->accepted;
  }
  store_next(op);
}

void DhtNode::store_next(const std::shared_ptr<StoreOp>& op) {
  while (op->answered + op->outstanding < op->wanted && op->next < op->targets.size()) {
    const Contact target = op->targets[op->next++];
    DhtMessage m = header(MessageKind::StoreRequest, 0);
    m.target = op->key;
    m.subkey = op->subkey;
    m.value = op->value;
    const bool sent = send_request(target.peer, target.id, std::move(m), [this, op](const DhtMessage* reply, const Pending&) {
      --op->outstanding;
      if (reply) {
        ++op->answered;
        if (reply->stored) ++op->accepted;
      } else {
        // The next store looks the replicas up again rather than storing to the set without this
        // one. Readers still reach a replica that answered late once (behind a round's gradient
        // parts on the same connection, say), and a set without it would leave our record there
        // stale for the whole reuse period: reads that merged it saw too few peers.
        replica_sets_.erase(op->key);
      }
      store_next(op);  // a failed replica is replaced by the next closest node
    });
    if (sent) {
      ++op->outstanding;
    } else {
      replica_sets_.erase(op->key);  // banned: likewise
    }
  }
  if (op->outstanding == 0 && op->done) {
    if (op->accepted == 0) replica_sets_.erase(op->key);
    StoreCallback done = std::move(op->done);
    op->done = nullptr;
    done(StoreResult{op->accepted > 0, op->accepted, op->lookup});
  }
}

void DhtNode::get(std::string_view key, GetCallback done, GetOptions options) {
  get_id(NodeId::of_key(key, config_.id_bits), std::move(done), options);
}

void DhtNode::get_id(const NodeId& key, GetCallback done, GetOptions options) {
  std::optional<Record> local;
  if (const Record* held = storage_.find(key, env_.now())) local = *held;
  if (local && options.sufficient_responses <= 1) {
    later(0, [done = std::move(done), local = std::move(local)]() mutable { done(std::move(local), LookupStats{}); });
    return;
  }
  start_lookup(key, true, config_.bucket_size, options, std::move(local),
               [done = std::move(done)](Lookup& l) { done(std::move(l.found), l.stats); });
}

void DhtNode::find_nodes(const NodeId& target, FindCallback done) {
  start_lookup(target, false, config_.bucket_size, {}, std::nullopt, [this, done = std::move(done)](Lookup& l) {
    done(l.shortlist.closest_responded(config_.bucket_size), l.stats);
  });
}

// ---------------------------------------------------------------------------------------------
// Maintenance

void DhtNode::refresh_bucket(int index) {
  const NodeId target = random_id_in_bucket(id_, index, env_.rng(), config_.id_bits);
  start_lookup(target, false, config_.refresh_lookup_size, {}, std::nullopt, [this, index, target](Lookup&) {
    // Still nobody in the bucket's range. The nodes asked were those nearest the target, on our
    // side of the tree, and they can all lack that range too: nodes that joined at the same moment
    // learned only of each other (docs/interpretations.md §30). Nodes farther out hold the range
    // inside a wider bucket of their own: ask them.
    if (!table_.bucket(index).entries.empty()) return;
    std::vector<Contact> outside;
    for (int i = index + 1; i < config_.id_bits; ++i)
      for (const RoutingTable::Entry& e : table_.bucket(i).entries) outside.push_back(e.contact);
    if (!outside.empty()) start_lookup(target, false, config_.refresh_lookup_size, {}, std::nullopt, [](Lookup&) {}, &outside);
  });
}

void DhtNode::maintenance() {
  const Seconds now = env_.now();
  storage_.purge(now);
  forget_replica_sets(now);
  const Seconds longest_ban = config_.blacklist_base_s * std::pow(config_.blacklist_backoff, config_.blacklist_max_exponent);
  blacklist_.forget_older_than(now - longest_ban);
  for (int index : table_.stale_buckets(now, config_.bucket_refresh_interval_s)) refresh_bucket(index);
  later(config_.maintenance_period_s, [this] { maintenance(); });
}

RoutingTableHealth DhtNode::health() const {
  RoutingTableHealth h;
  h.entries = table_.size();
  h.nonempty_buckets = table_.nonempty_buckets();
  h.replacements = table_.replacement_count();
  h.banned_peers = blacklist_.size();
  h.stored_keys = storage_.size();
  h.pending_requests = pending_.size();
  h.active_lookups = lookups_.size();
  return h;
}

}  // namespace swarmlab::core::dht
