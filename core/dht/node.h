#pragma once
// A Kademlia DHT node (Maymounkov & Mazières 2002) with hivemind's value model: keys map to plain
// values or to dictionaries of subkeys, each with an absolute expiration time; the newest
// expiration wins (record.h).
//
// The node is driven only through the environment seam (core/env.h): it sends and receives
// core::Message, sets timers and draws randomness from its Environment, and never reads a clock.
// It is a core::Service: a peer that hosts several services adds it to its ServiceMux under
// ServiceId::Dht; a peer that runs only the DHT calls env.set_sink(&node).
//
// Times are the environment's now(); expirations are absolute in that clock. Nodes that store
// and read each other's values must therefore share a time origin (the simulator's clock, or
// wall-clock seconds in a live binding), as hivemind's get_dht_time() does.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/dht/blacklist.h"
#include "core/dht/config.h"
#include "core/dht/messages.h"
#include "core/dht/record.h"
#include "core/dht/routing_table.h"
#include "core/dht/shortlist.h"
#include "core/dht/value_store.h"
#include "core/env.h"

namespace swarmlab::core::dht {

struct LookupStats {
  // Sequential request rounds until the answer: 0 when answered from local storage, 1 when a node
  // from our own table had it, and so on. For node lookups, the hop of the closest node found.
  int hops = 0;
  Seconds latency_s = 0;
  int requests = 0;  // requests the lookup sent
  int failures = 0;  // of which failed (timeout, broken link) or were skipped (peer banned)
};

struct StoreResult {
  bool ok = false;           // at least one replica (possibly this node) accepted the value
  std::size_t replicas = 0;  // replicas that accepted it
  LookupStats lookup;        // the lookup that found the replicas
};

struct GetOptions {
  // The lookup stops once this many nodes (this one included) returned the key, merging their
  // records. 1 is Kademlia's FIND_VALUE; more gathers more subkeys of a dictionary written by
  // many peers, and then waits until that many of the closest nodes it knows have answered too.
  std::size_t sufficient_responses = 1;
};

struct DhtStats {
  std::uint64_t messages_sent = 0, bytes_sent = 0;  // bytes on the wire, framing included
  std::uint64_t messages_received = 0, bytes_received = 0;
  std::uint64_t dropped_malformed = 0;   // failed to decode
  std::uint64_t dropped_clock_skew = 0;  // sender time too far from ours
  std::uint64_t dropped_unexpected = 0;  // a reply nobody waits for, or from the wrong peer
  std::uint64_t requests_sent = 0, requests_failed = 0;  // failed: timed out, link broke
  std::uint64_t requests_busy = 0;  // of the failed: timed out while the peer kept talking (not banned)
  // Requests by purpose: FIND_NODE/FIND_VALUE of lookups, STORE, and pings of a full bucket's
  // least-recently-seen entry (the rest of requests_sent are bootstrap pings).
  std::uint64_t find_requests = 0, store_requests = 0, liveness_pings = 0;
  std::uint64_t lookups = 0;  // iterative lookups started (gets, stores, joins, refreshes)
};

struct RoutingTableHealth {
  std::size_t entries = 0;
  std::size_t nonempty_buckets = 0;
  std::size_t replacements = 0;
  std::size_t banned_peers = 0;
  std::size_t stored_keys = 0;
  std::size_t pending_requests = 0;
  std::size_t active_lookups = 0;
};

class DhtNode final : public Service {
 public:
  using BootstrapCallback = std::function<void(bool ok)>;
  using StoreCallback = std::function<void(const StoreResult&)>;
  using GetCallback = std::function<void(std::optional<Record>, const LookupStats&)>;
  using FindCallback = std::function<void(std::vector<Contact>, const LookupStats&)>;

  DhtNode(Environment& env, NodeId id, DhtConfig config = {});
  ~DhtNode() override;
  DhtNode(const DhtNode&) = delete;
  DhtNode& operator=(const DhtNode&) = delete;

  const NodeId& id() const { return id_; }
  const DhtConfig& config() const { return config_; }

  // Joins through `initial` (transport peers; their ids are learnt from their replies): pings
  // them, looks up our own id, then refreshes the buckets beyond our closest neighbour (Kademlia
  // §2.3; without it a newcomer's far buckets stay nearly empty and some lookups miss). `done`
  // gets true once the self-lookup finished with at least one initial peer answering. Also starts
  // periodic maintenance (bucket refresh, purge of expired values).
  void bootstrap(std::vector<PeerId> initial, BootstrapCallback done);

  // Stores under SHA-1(key) on the num_replicas closest nodes, found by a lookup that converges
  // on that many (hivemind); this node holds a replica itself when it is among them, and a replica
  // that fails is replaced by the next closest node that answered. With a subkey, stores one entry
  // of a dictionary value. `done` gets ok when at least one replica accepted. The lookup is skipped
  // when one of the same key finished within store_lookup_reuse_s (config.h): its replicas serve.
  void store(std::string_view key, Bytes value, Seconds expiration, StoreCallback done);
  void store(std::string_view key, Bytes subkey, Bytes value, Seconds expiration, StoreCallback done);
  void store_id(const NodeId& key, std::optional<Bytes> subkey, TimedValue value, StoreCallback done);

  // Finds the live value under SHA-1(key): local storage first, then an iterative FIND_VALUE.
  // `done` always runs later, never inside this call.
  void get(std::string_view key, GetCallback done, GetOptions options = {});
  void get_id(const NodeId& key, GetCallback done, GetOptions options = {});

  // The k closest nodes to `target` that answered an iterative FIND_NODE.
  void find_nodes(const NodeId& target, FindCallback done);

  // One encoded message from `from` (the first byte is ServiceId::Dht). Returns false when it was
  // dropped: malformed, clock skew, or a reply nobody waits for.
  bool receive(PeerId from, std::span<const std::uint8_t> bytes);
  void handle(PeerId from, const Message& message) override { receive(from, message.bytes); }
  // The transport to `peer` broke: its pending requests fail now rather than at their timeout.
  void on_link_failure(PeerId peer) override;
  // Another service found `peer` unresponsive with its connection still open (an averaging round
  // dropped it by a timeout: a process stopped, or cut off): its pending requests fail now, and it
  // is banned and leaves the routing table as after a timeout of ours, so that lookups stop waiting
  // for it - a read of a key nobody holds asks every one of the closest nodes and would otherwise
  // wait out the request timeout on it. Any message from it lifts the ban and lists it again.
  void suspect(PeerId peer);

  RoutingTableHealth health() const;
  const RoutingTable& routing_table() const { return table_; }
  const Blacklist& blacklist() const { return blacklist_; }
  ValueStore& storage() { return storage_; }
  const ValueStore& storage() const { return storage_; }
  const DhtStats& stats() const { return stats_; }

  // When anything last arrived from a peer, on any service of this peer (-infinity: never). A
  // request that times out while its peer keeps talking waited behind other traffic on the
  // connection (an averaging round's parts, say); it fails, but the peer is not banned or dropped
  // from the routing table for it. Without a liveness source every timeout counts.
  using Liveness = std::function<Seconds(PeerId)>;
  void set_liveness(Liveness last_heard) { last_heard_ = std::move(last_heard); }

 private:
  struct Pending;
  // Runs once per request: `reply` is nullptr when it failed. Handlers read what they need from
  // the request (the id asked, say) so their captures stay small enough not to allocate.
  using ReplyHandler = std::function<void(DhtMessage* reply, const Pending& request)>;  // may take from `reply`
  struct Pending {
    PeerId peer = 0;
    std::optional<NodeId> expected;  // the id we believe answers at `peer`, if known
    MessageKind expect = MessageKind::PingResponse;
    Seconds sent = 0;
    Seconds deadline = 0;
    std::uint64_t lookup = 0;  // the lookup that sent it (0: none); once it finished, nobody reads the body
    ReplyHandler on_reply;
  };
  struct Lookup;
  struct StoreOp;
  using LookupDone = std::function<void(Lookup&)>;

  DhtMessage header(MessageKind kind, std::uint64_t request_id) const;
  // `record`, when given, is sent as m.record (a FindValue answer straight from storage).
  void send(PeerId to, const DhtMessage& m, const Record* record = nullptr);
  // Sends a request and arranges for `on_reply` to run exactly once (reply, timeout or link
  // failure). Returns false without sending if the peer is banned.
  bool send_request(PeerId to, std::optional<NodeId> expected, DhtMessage m, ReplyHandler on_reply,
                    std::uint64_t lookup_id = 0);
  // `timed_out`: no reply in time (rather than a broken link), which a busy peer is forgiven.
  void fail_request(std::uint64_t request_id, bool timed_out = false);
  // Request timeouts share one timer: the timeout is the same for every request and ids grow with
  // time, so the oldest pending request always has the earliest deadline.
  void arm_timeout();
  void expire_requests();
  void heard_from(PeerId peer, const DhtMessage& m);
  void answer(PeerId from, const DhtMessage& request);
  void on_reply(PeerId from, const DhtMessage& reply);

  // An iterative lookup that converges on the `window` closest nodes (k for node and value
  // lookups; num_replicas for the lookup before a store, as hivemind does). It starts from the
  // routing table's nodes closest to `target`, or from `seeds` when given.
  void start_lookup(const NodeId& target, bool find_value, std::size_t window, GetOptions options,
                    std::optional<Record> local, LookupDone done, const std::vector<Contact>* seeds = nullptr);
  void pump(std::uint64_t lookup_id);
  void lookup_reply(std::uint64_t lookup_id, const NodeId& asked, DhtMessage* reply);
  void finish_lookup(std::uint64_t lookup_id);
  // A lookup that merges several replicas (sufficient_responses > 1) stops once that many nodes
  // returned the key and its that many closest known nodes (this one among them, when it holds the
  // key and is that close) have all answered: a dictionary on farther nodes can be a stale part of
  // the one the replicas hold (docs/interpretations.md §30).
  bool closest_answered(const Lookup& l) const;
  // Sends the store to its replicas among `targets` (closest first, the rest spares).
  void store_to(const std::shared_ptr<StoreOp>& op, std::vector<Contact> targets);
  void store_next(const std::shared_ptr<StoreOp>& op);
  // Drops the replica sets older than the reuse period (all of them if that leaves too many).
  void forget_replica_sets(Seconds now);
  static constexpr std::size_t kMaxReplicaSets = 1024;

  void maintenance();
  void refresh_bucket(int index);
  // Runs `fn` later (never inside the caller), unless this node has been destroyed by then.
  void later(Seconds delay, std::function<void()> fn);
  // The same at time `due` (at once, on a later turn, if it is past).
  void later_at(Seconds due, std::function<void()> fn);

  Environment& env_;
  NodeId id_;
  DhtConfig config_;
  WireLimits limits_;
  RoutingTable table_;
  ValueStore storage_;
  Blacklist blacklist_;
  DhtStats stats_;
  std::map<std::uint64_t, Pending> pending_;  // ordered: failures are handled in request order
  std::uint64_t next_request_id_ = 1;
  bool timeout_armed_ = false;
  std::map<std::uint64_t, std::unique_ptr<Lookup>> lookups_;
  // The replicas the last store lookup of each key found, for store_lookup_reuse_s (config.h).
  struct ReplicaSet {
    std::vector<Contact> closest;  // nearest first
    Seconds found = 0;
    std::uint64_t table_version = 0;  // our routing table then: any change since, and we look again
  };
  std::map<NodeId, ReplicaSet> replica_sets_;
  std::uint64_t next_lookup_id_ = 1;
  bool maintaining_ = false;
  Liveness last_heard_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::dht
