#pragma once
// The Kademlia routing table: one k-bucket per bit position of the XOR distance from our id.
//
// Eviction prefers old, reliable peers (Kademlia §2.2, docs/hydra.md §1): a newcomer to a full
// bucket waits in the bucket's replacement cache while the least-recently-seen entry is pinged, and
// takes a place only when an entry fails. update() says whom to ping; the node reports the outcome
// by calling update() again (the entry answered) or remove() (it failed), which promotes the most
// recently seen replacement. One ping per bucket is outstanding at a time.
//
// With a ping interval T > 0 a bucket pings at most once per T, and never an entry heard from
// within T: in a large network almost every request comes from a stranger, and checking an entry
// on each would double the traffic (hivemind does; T = 0 reproduces that). Entries that die
// between checks are still evicted as soon as a request to them fails.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/dht/contact.h"

namespace swarmlab::core::dht {

class RoutingTable {
 public:
  struct Entry {
    Contact contact;
    Seconds last_seen = 0;
  };
  struct Bucket {
    std::vector<Entry> entries;        // least recently seen first
    std::vector<Entry> replacements;  // most recently seen last
    std::optional<NodeId> pinging;     // the entry whose liveness check is in flight
    Seconds last_lookup = 0;           // last lookup of an id in this bucket's range (or creation)
    Seconds last_ping = -1e300;        // when the last liveness ping was sent
  };

  enum class Outcome { Added, Refreshed, Queued, Ignored };
  struct UpdateResult {
    Outcome outcome = Outcome::Ignored;
    std::optional<Contact> ping;  // Queued: ping this entry; nullopt if no check is due
  };

  RoutingTable(NodeId self, std::size_t bucket_size, std::size_t replacement_cache_size, Seconds ping_interval = 0);

  const NodeId& self() const { return self_; }
  std::size_t bucket_size() const { return k_; }

  // We heard from `contact` (a request or a reply). Ignores our own id.
  UpdateResult update(const Contact& contact, Seconds now);
  // `id` failed: drops it (from the entries or the replacement cache) and promotes a replacement.
  bool remove(const NodeId& id);
  const Entry* find(const NodeId& id) const;
  bool contains(const NodeId& id) const { return find(id) != nullptr; }

  // Up to `count` entries closest to `target`, nearest first, leaving out `exclude` if given.
  std::vector<Contact> closest(const NodeId& target, std::size_t count, const NodeId* exclude = nullptr) const;
  // The same into `out` (replacing its contents), reusing its storage.
  void closest(const NodeId& target, std::size_t count, const NodeId* exclude, std::vector<Contact>& out) const;

  // A lookup for `target` just ran: its bucket counts as refreshed.
  void mark_looked_up(const NodeId& target, Seconds now);
  // Non-empty buckets not looked up within `interval`, lowest index first.
  std::vector<int> stale_buckets(Seconds now, Seconds interval) const;
  // Index of the lowest non-empty bucket (our closest neighbour's), or -1 when empty.
  int closest_bucket() const;

  std::size_t size() const { return size_; }
  // Changes whenever an entry is added or removed (not when one is only refreshed).
  std::uint64_t version() const { return version_; }
  std::size_t replacement_count() const;
  std::size_t nonempty_buckets() const;
  const Bucket& bucket(int index) const;
  void for_each(const std::function<void(const Entry&)>& fn) const;

 private:
  NodeId self_;
  std::size_t k_;
  std::size_t replacement_cache_size_;
  Seconds ping_interval_;
  std::size_t size_ = 0;
  std::uint64_t version_ = 0;
  // The bucket `index`, created on first use. Most of the 160 (or 256) buckets stay empty for
  // ever (a network of N nodes fills about log2 N), and thousands of simulated nodes each hold a
  // table, so empty buckets take one pointer.
  Bucket& bucket_at(int index, Seconds now);
  const Bucket* find_bucket(int index) const { return buckets_[index].get(); }

  std::array<std::unique_ptr<Bucket>, NodeId::kMaxBits> buckets_;

};

}  // namespace swarmlab::core::dht
