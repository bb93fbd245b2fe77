#include "core/dht/value_store.h"

#include <algorithm>
#include <functional>

namespace swarmlab::core::dht {
namespace {

// The footprint `held` would have if `value` were accepted into it (checked before merging, so a
// rejected store leaves the record untouched).
std::size_t footprint_after(const Record& held, const Bytes* subkey, const TimedValue& value) {
  if (!subkey || !held.is_dictionary()) return make_record(subkey, value).footprint();
  const std::size_t now_bytes = held.footprint();
  const Record single = make_record(subkey, value);
  const std::size_t added = single.footprint() - Record(Dictionary{}).footprint();
  auto it = held.dictionary().find(*subkey);
  if (it == held.dictionary().end()) return now_bytes + added;
  return now_bytes - it->second.value.size() + value.value.size();
}

}  // namespace

bool ValueStore::store(const NodeId& key, const Bytes* subkey, const TimedValue& value, Seconds now) {
  if (!(value.expiration > now)) return false;
  purge(now);
  auto it = records_.find(key);
  if (it == records_.end()) {
    if (records_.size() >= max_keys_) return false;
    Record record = make_record(subkey, value);
    if (record.footprint() > max_record_bytes_) return false;
    records_.emplace(key, std::move(record));
  } else {
    Record& held = it->second;
    held.drop_expired(now);
    if (footprint_after(held, subkey, value) > max_record_bytes_) return false;
    const bool accepted = subkey ? held.merge_subkey(*subkey, value) : held.merge_plain(value);
    if (!accepted) return false;
  }
  expiries_.push_back({value.expiration, key});
  std::push_heap(expiries_.begin(), expiries_.end(), std::greater<>());
  return true;
}

const Record* ValueStore::find(const NodeId& key, Seconds now) {
  auto it = records_.find(key);
  if (it == records_.end()) return nullptr;
  if (!it->second.drop_expired(now)) {
    records_.erase(it);
    return nullptr;
  }
  return &it->second;
}

void ValueStore::purge(Seconds now) {
  while (!expiries_.empty() && expiries_.front().at <= now) {
    const NodeId key = expiries_.front().key;
    std::pop_heap(expiries_.begin(), expiries_.end(), std::greater<>());
    expiries_.pop_back();
    auto it = records_.find(key);
    if (it != records_.end() && !it->second.drop_expired(now)) records_.erase(it);
  }
}

}  // namespace swarmlab::core::dht
