#pragma once
// Who stored what in a node's ValueStore: each held entry (a plain value, or one subkey of a
// dictionary) is charged to the peer whose store request put it there, so that no one publisher
// can fill the store and have everyone else's stores refused (docs/trust.md §2). Only the owner of
// a value stores it (nothing here republishes others' records), so the sender of a store request
// is its publisher. Charges end when the entry expires, is replaced by a newer version, or is
// swept away by the merge rules (a plain value over a dictionary, a subkey over a plain value).
#include <cstddef>
#include <map>
#include <unordered_map>
#include <vector>

#include "core/dht/node_id.h"
#include "core/dht/record.h"
#include "core/types.h"
#include "core/wire.h"  // BytesLess

namespace swarmlab::core::dht {

struct PublisherLimits {
  std::size_t max_bytes = SIZE_MAX;    // footprints of the entries it holds (record.h)
  std::size_t max_entries = SIZE_MAX;  // plain values and subkeys it holds
};

class PublisherLedger {
 public:
  explicit PublisherLedger(PublisherLimits limits) : limits_(limits) {}

  // Whether `publisher` may hold one more entry of `bytes` at (key, subkey): what it would hold
  // with it, less what it holds there now, stays within the limits.
  bool admits(PeerId publisher, const NodeId& key, const Bytes* subkey, std::size_t bytes) const;
  // The entry at (key, subkey) is now `publisher`'s, until `expiration`.
  void charge(PeerId publisher, const NodeId& key, const Bytes* subkey, std::size_t bytes,
              Seconds expiration);
  // The entry at (key, subkey) is no longer anyone's (a node's own store replaced it).
  void release(const NodeId& key, const Bytes* subkey);
  // Every entry under `key`: its plain value and all its subkeys.
  void release_key(const NodeId& key);
  // Ends the charges of entries that expired at or before `now`.
  void purge(Seconds now);

  std::size_t bytes_of(PeerId publisher) const;
  std::size_t entries_of(PeerId publisher) const;
  std::size_t publishers() const { return usage_.size(); }

 private:
  struct Entry {
    NodeId key;
    bool is_subkey = false;
    Bytes subkey;
  };
  // An entry's address without copying its subkey, for lookups.
  struct EntryRef {
    const NodeId& key;
    const Bytes* subkey;
  };
  // By key first, so that a key's entries are adjacent (release_key); its plain value first.
  struct EntryLess {
    using is_transparent = void;
    static EntryRef ref(const Entry& e) { return {e.key, e.is_subkey ? &e.subkey : nullptr}; }
    static EntryRef ref(const EntryRef& e) { return e; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      const EntryRef x = ref(a), y = ref(b);
      if (x.key != y.key) return x.key < y.key;
      if (!x.subkey || !y.subkey) return !x.subkey && y.subkey;
      return BytesLess{}(*x.subkey, *y.subkey);
    }
  };
  struct Charge {
    PeerId publisher = 0;
    std::size_t bytes = 0;
    Seconds expiration = 0;
  };
  struct Usage {
    std::size_t bytes = 0, entries = 0;
  };
  struct Expiry {
    Seconds at;
    Entry entry;
    bool operator>(const Expiry& o) const { return at > o.at; }
  };
  using Charges = std::map<Entry, Charge, EntryLess>;
  void uncount(const Charge& charge);  // takes it off its publisher's usage
  void drop(Charges::iterator it);

  PublisherLimits limits_;
  Charges charges_;
  std::unordered_map<PeerId, Usage> usage_;  // only publishers that hold something
  std::vector<Expiry> expiries_;             // min-heap; stale once an entry is charged again
};

}  // namespace swarmlab::core::dht
