#pragma once
// What the DHT stores under a key: a plain value or a dictionary of subkeys, each with an absolute
// expiration time (docs/dedloc.md §5). The same merge rules serve the storage of a node and a
// lookup that combines the answers of several replicas, so both agree on which version wins:
// - a newer expiration replaces an older one; on a tie the value already held stays;
// - a plain value replaces a dictionary only if it expires later than every subkey in it;
// - a subkey stored over a plain value replaces it (with a one-entry dictionary) only if the
//   subkey expires later than the plain value.
#include <cstdint>
#include <map>
#include <variant>
#include <vector>

#include "core/env.h"
#include "core/wire.h"  // BytesLess

namespace swarmlab::core::dht {

using Bytes = std::vector<std::uint8_t>;

struct TimedValue {
  Bytes value;
  Seconds expiration = 0;
  friend bool operator==(const TimedValue&, const TimedValue&) = default;
};

// Subkey → value. Ordered, so encoding and iteration are deterministic.
using Dictionary = std::map<Bytes, TimedValue, BytesLess>;

class Record {
 public:
  Record() { recount(); }
  explicit Record(TimedValue value) : content_(std::move(value)) { recount(); }
  explicit Record(Dictionary dictionary) : content_(std::move(dictionary)) { recount(); }

  bool is_dictionary() const { return std::holds_alternative<Dictionary>(content_); }
  const TimedValue& value() const { return std::get<TimedValue>(content_); }
  const Dictionary& dictionary() const { return std::get<Dictionary>(content_); }

  // Plain: its expiration. Dictionary: the latest subkey expiration (-inf when empty).
  Seconds expiration() const;
  // Removes expired parts (expiration <= now); returns false when nothing is left.
  bool drop_expired(Seconds now);
  // Bytes of values and subkeys held, plus a fixed overhead per entry (for storage limits).
  std::size_t footprint() const;

  // Applies the merge rules above. Each returns true if the record changed or already held exactly
  // this version (so a repeated store is acknowledged), false if a newer version wins.
  bool merge_plain(const TimedValue& incoming);
  bool merge_subkey(const Bytes& subkey, const TimedValue& incoming);
  // Merges every part of `other` (a plain value, or each subkey of a dictionary).
  void merge(const Record& other);

  friend bool operator==(const Record& a, const Record& b) { return a.content_ == b.content_; }

 private:
  // Recomputes the two figures below from the content.
  void recount();

  std::variant<TimedValue, Dictionary> content_;
  // Kept up to date on every change, so that a large dictionary (every expert runtime announcing
  // under one key, docs/learning-at-home.md §8) costs O(log n) per merge and per read instead of
  // O(n): the footprint exactly, and a lower bound on the earliest expiration, below which
  // drop_expired has nothing to drop.
  std::size_t footprint_ = 0;
  Seconds earliest_ = 0;
};

// Builds a record holding one value (plain when `subkey` is null).
Record make_record(const Bytes* subkey, TimedValue value);

// Footprints (for storage limits): a plain record is one entry; a dictionary is the overhead of one
// entry plus each of its subkeys' entries.
inline constexpr std::size_t kEntryOverhead = 32;
// What one entry (a plain value, or one subkey of a dictionary) adds to a record's footprint.
inline std::size_t entry_footprint(const Bytes* subkey, const TimedValue& value) {
  return kEntryOverhead + (subkey ? subkey->size() : 0) + value.value.size();
}

}  // namespace swarmlab::core::dht
