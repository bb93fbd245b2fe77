#pragma once
// Every tunable of the DHT in one place, with hivemind's defaults (docs/hivemind.md §1) where it
// has one and the Kademlia paper's otherwise.
#include <cstddef>
#include <cstdint>

#include "core/dht/node_id.h"
#include "core/env.h"

namespace swarmlab::core::dht {

struct DhtConfig {
  // Width of node ids and keys: 160 (SHA-1 keys, hivemind) or 256 (SHA-256 keys, Hydra). Nodes of
  // different widths cannot talk: each drops the other's messages as malformed.
  int id_bits = kKademliaIdBits;
  // k: entries per bucket, contacts per reply, and how many closest nodes node and value lookups
  // converge on.
  std::size_t bucket_size = 20;
  // α: requests a lookup keeps in flight (hivemind: "4 workers").
  std::size_t parallelism = 4;
  // Replicas per store: the value goes to this many of the closest nodes (hivemind: 5).
  std::size_t num_replicas = 5;
  // A request with no reply after this long has failed (hivemind DHTNode wait_timeout: 3 s).
  Seconds request_timeout_s = 3.0;
  // Value lookups that ask no more than they need (docs/interpretations.md §27):
  // - once some node (or this one) returned the value, a FIND_VALUE lookup has reached the
  //   replicas and keeps in flight only as many requests as it still needs replies holding the
  //   value (at most α): a reply beyond those needed only costs a record on the wire. A request
  //   unanswered after slow_request_s stops holding its slot, so a slow or dead node delays the
  //   lookup by that much, not by the request timeout. Until then it keeps α in flight;
  // - once some node returned the value, the lookup converges on the num_replicas closest nodes
  //   (where stores put it) rather than k: a dictionary that fewer replicas hold than the lookup
  //   asks for is not searched for across the whole window.
  // Off by default: with it, a reader whose closest replica is stopped (connections open) waits
  // slow_request_s where α in flight took the fastest answer, and the live test of a peer stopped
  // for good still failed under load (docs/interpretations.md §27).
  bool narrow_value_lookups = false;
  Seconds slow_request_s = 1.0;

  // A store reuses the replicas that its node's last lookup of the same key found, if that lookup
  // finished less than this long ago, instead of looking them up again (OpenDHT keeps a search per
  // key alive the same way; docs/interpretations.md §28). A peer republishes its progress every
  // few seconds and every store began with a lookup: half the DHT's requests. Any change to our
  // routing table (a node added or dropped) since that lookup, and the store looks up again: a set
  // found while we knew few nodes (just after joining) is not kept. Nor is a set whose lookup some
  // node failed to answer, and a replica that fails a store drops the set: a replica busy behind a
  // round's gradient parts answers late without leaving our routing table, and a set kept without
  // it left readers there a stale record. 0 looks up before every store.
  Seconds store_lookup_reuse_s = 30.0;

  // Failing peers are banned: the n-th consecutive failure (n = 0 for the first) bans the peer
  // for blacklist_base_s · blacklist_backoff^n seconds (hivemind Blacklist: 5 · 2^n).
  Seconds blacklist_base_s = 5.0;
  double blacklist_backoff = 2.0;
  // The exponent stops growing here, so a long-dead peer is retried about once per 5·2^10 s.
  int blacklist_max_exponent = 10;

  // A message whose sender time differs from ours by more than this is dropped (hivemind: 3 s).
  Seconds clock_skew_tolerance_s = 3.0;

  // Buckets not touched by a lookup for this long are refreshed with a lookup of a random id in
  // them (Kademlia paper: one hour).
  Seconds bucket_refresh_interval_s = 3600.0;
  // A refresh lookup converges on this many nodes rather than k: its job is to fill one bucket
  // with live nodes from that bucket's range, which the first rounds of a lookup into it already
  // do; converging on the k closest to a random id would double the traffic of joins and refreshes.
  std::size_t refresh_lookup_size = 8;
  // How often the node checks for stale buckets and purges expired values.
  Seconds maintenance_period_s = 60.0;
  // Newcomers to a full bucket wait here (most recent first) for an entry to fail.
  std::size_t replacement_cache_size = 20;
  // A full bucket pings its least-recently-seen entry when a newcomer arrives, at most once per
  // this interval and only if that entry was not heard from within it (routing_table.h). 0 pings
  // on every newcomer, one ping per bucket at a time, as hivemind does.
  Seconds bucket_ping_interval_s = 60.0;
  // After bootstrap, also refresh the buckets farther than the closest neighbour (Kademlia §2.3).
  bool refresh_far_buckets_on_join = true;

  // A client-mode node answers nothing worth routing to (behind NAT, say): others do not add it
  // to their routing tables. It still stores and gets.
  bool client_mode = false;

  // Limits on what a peer accepts; larger messages or fields are malformed.
  std::size_t max_message_bytes = 1u << 20;
  std::size_t max_value_bytes = 64u << 10;
  std::size_t max_subkey_bytes = 1024;
  std::size_t max_contacts_per_message = 256;
  // Storage limits, so a peer cannot be made to hold unbounded state.
  std::size_t max_stored_keys = 1u << 20;
  std::size_t max_record_bytes = (1u << 20) - 4096;  // one record must fit in a reply
  // All records together (without it, the limits above allow a million records of a MiB each).
  // A collaboration's progress records and declarations take kilobytes per peer.
  std::size_t max_stored_bytes = std::size_t{256} << 20;
  // What the entries stored by one sender may take of those (core/dht/publisher_ledger.h): an
  // eighth, so that a flooding peer leaves room for everyone else. The largest honest publisher
  // is an expert runtime's checkpoints (64 KiB values, docs/learning-at-home.md §8): 256 experts
  // held on one node fill half of this.
  std::size_t max_stored_bytes_per_publisher = std::size_t{32} << 20;
  std::size_t max_stored_entries_per_publisher = std::size_t{1} << 17;
};

// Hydra's DHT (docs/hydra.md §1) as a configuration of this one: 256-bit ids and SHA-256 keys; one
// list of at most `list_size` (Hydra's M) per bit position; a newcomer to a full list makes the
// list ping its least-recently-seen entry at once (no ping interval) and takes that entry's place
// only if it fails to answer, so old reliable peers stay; one newcomer waits at a time (a
// replacement cache of one), the others are turned away. Every request inserts its requester, as
// in every configuration. The rest (α, replicas, timeouts) is hivemind's, which Hydra leaves open.
inline DhtConfig hydra_dht_config(std::size_t list_size = 20) {
  DhtConfig c;
  c.id_bits = kHydraIdBits;
  c.bucket_size = list_size;
  c.bucket_ping_interval_s = 0;
  c.replacement_cache_size = 1;
  return c;
}


}  // namespace swarmlab::core::dht
