#include "core/dht/value_store.h"

#include <algorithm>
#include <functional>

namespace swarmlab::core::dht {
namespace {

// The footprint `held` would have if `value` were accepted into it (checked before merging, so a
// rejected store leaves the record untouched).
std::size_t footprint_after(const Record& held, const Bytes* subkey, const TimedValue& value) {
  const std::size_t entry = entry_footprint(subkey, value);
  if (!subkey) return entry;                                   // a plain value replaces the record
  if (!held.is_dictionary()) return kEntryOverhead + entry;  // a one-entry dictionary replaces it
  auto it = held.dictionary().find(*subkey);
  if (it == held.dictionary().end()) return held.footprint() + entry;
  return held.footprint() - it->second.value.size() + value.value.size();
}

}  // namespace

bool ValueStore::store(const NodeId& key, const Bytes* subkey, const TimedValue& value, Seconds now,
                       std::optional<PeerId> publisher) {
  if (!(value.expiration > now)) return false;
  purge(now);
  const std::size_t entry_bytes = entry_footprint(subkey, value);
  if (publisher && !ledger_.admits(*publisher, key, subkey, entry_bytes)) {
    ++refused_over_publisher_limit_;
    return false;
  }
  auto it = records_.find(key);
  if (it == records_.end()) {
    if (records_.size() >= max_keys_) return false;
    Record record = make_record(subkey, value);
    const std::size_t size = record.footprint();
    if (size > max_record_bytes_ || size > max_bytes_ - bytes_) return false;
    bytes_ += size;
    records_.emplace(key, std::move(record));
  } else {
    Record& held = it->second;
    drop_expired(held, now);
    const std::size_t before = held.footprint(), after = footprint_after(held, subkey, value);
    if (after > max_record_bytes_ || (after > before && after - before > max_bytes_ - bytes_)) return false;
    const bool was_dictionary = held.is_dictionary();
    const bool accepted = subkey ? held.merge_subkey(*subkey, value) : held.merge_plain(value);
    if (!accepted) return false;
    bytes_ = bytes_ - before + held.footprint();
    // What the merge swept away is no longer its publishers'.
    if (!subkey && was_dictionary) ledger_.release_key(key);
    if (subkey && !was_dictionary) ledger_.release(key, nullptr);
  }
  if (publisher) {
    ledger_.charge(*publisher, key, subkey, entry_bytes, value.expiration);
  } else {
    ledger_.release(key, subkey);
  }
  expiries_.push_back({value.expiration, key});
  std::push_heap(expiries_.begin(), expiries_.end(), std::greater<>());
  return true;
}

bool ValueStore::drop_expired(Record& held, Seconds now) {
  const std::size_t before = held.footprint();
  const bool live = held.drop_expired(now);
  bytes_ = bytes_ - before + held.footprint();
  return live;
}

void ValueStore::erase(std::map<NodeId, Record>::iterator it) {
  bytes_ -= it->second.footprint();
  records_.erase(it);
}

const Record* ValueStore::find(const NodeId& key, Seconds now) {
  auto it = records_.find(key);
  if (it == records_.end()) return nullptr;
  if (!drop_expired(it->second, now)) {
    erase(it);
    return nullptr;
  }
  return &it->second;
}

void ValueStore::purge(Seconds now) {
  ledger_.purge(now);
  while (!expiries_.empty() && expiries_.front().at <= now) {
    const NodeId key = expiries_.front().key;
    std::pop_heap(expiries_.begin(), expiries_.end(), std::greater<>());
    expiries_.pop_back();
    auto it = records_.find(key);
    if (it != records_.end() && !drop_expired(it->second, now)) erase(it);
  }
}

}  // namespace swarmlab::core::dht
