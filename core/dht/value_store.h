#pragma once
// A node's local storage: key id → Record, applying the merge rules of record.h. Expired values
// are never returned; they are dropped when read and purged lazily from a heap of expirations.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/dht/config.h"
#include "core/dht/node_id.h"
#include "core/dht/publisher_ledger.h"
#include "core/dht/record.h"

namespace swarmlab::core::dht {

class ValueStore {
 public:
  // `max_bytes`: the footprints of every record together (record.h), so that no mix of keys and
  // record sizes, however many peers send them, makes a node hold more than this. `per_publisher`:
  // what the entries one peer stored may take of it (publisher_ledger.h).
  ValueStore(std::size_t max_keys, std::size_t max_record_bytes, std::size_t max_bytes = SIZE_MAX,
             PublisherLimits per_publisher = {})
      : max_keys_(max_keys), max_record_bytes_(max_record_bytes), max_bytes_(max_bytes),
        ledger_(per_publisher) {}
  // The storage limits of a DHT node's configuration.
  static ValueStore from(const DhtConfig& c) {
    return ValueStore(c.max_stored_keys, c.max_record_bytes, c.max_stored_bytes,
                      {c.max_stored_bytes_per_publisher, c.max_stored_entries_per_publisher});
  }

  // Stores a plain value (subkey == nullptr) or one subkey of a dictionary, for `publisher` (the
  // peer that sent the store; nullopt: this node's own store, which no publisher limit bounds).
  // Returns false when the value is already expired, a newer version is held, or a storage limit
  // would be exceeded.
  bool store(const NodeId& key, const Bytes* subkey, const TimedValue& value, Seconds now,
             std::optional<PeerId> publisher = std::nullopt);
  // The live record under `key`, or nullptr. Drops what has expired first.
  const Record* find(const NodeId& key, Seconds now);
  // Removes everything that expired at or before `now`.
  void purge(Seconds now);

  std::size_t size() const { return records_.size(); }
  std::size_t bytes() const { return bytes_; }
  const PublisherLedger& publishers() const { return ledger_; }
  // Stores refused because their publisher held its share already.
  std::size_t refused_over_publisher_limit() const { return refused_over_publisher_limit_; }

 private:
  // Record::drop_expired and erasing a record, keeping bytes_.
  bool drop_expired(Record& held, Seconds now);
  void erase(std::map<NodeId, Record>::iterator it);

  struct Expiry {
    Seconds at;
    NodeId key;
    bool operator>(const Expiry& o) const { return at > o.at || (at == o.at && key > o.key); }
  };
  std::size_t max_keys_;
  std::size_t max_record_bytes_;
  std::size_t max_bytes_;
  std::size_t bytes_ = 0;  // Σ footprint of records_
  PublisherLedger ledger_;
  std::size_t refused_over_publisher_limit_ = 0;
  std::map<NodeId, Record> records_;
  std::vector<Expiry> expiries_;  // min-heap; may hold stale entries for keys since refreshed
};

}  // namespace swarmlab::core::dht
