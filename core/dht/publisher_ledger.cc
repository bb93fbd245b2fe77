#include "core/dht/publisher_ledger.h"

#include <algorithm>
#include <functional>

namespace swarmlab::core::dht {

bool PublisherLedger::admits(PeerId publisher, const NodeId& key, const Bytes* subkey,
                             std::size_t bytes) const {
  Usage held;
  if (auto it = usage_.find(publisher); it != usage_.end()) held = it->second;
  if (auto it = charges_.find(EntryRef{key, subkey}); it != charges_.end() && it->second.publisher == publisher) {
    held.bytes -= it->second.bytes;  // replacing its own entry
    held.entries -= 1;
  }
  return held.entries < limits_.max_entries && bytes <= limits_.max_bytes &&
         held.bytes <= limits_.max_bytes - bytes;
}

void PublisherLedger::charge(PeerId publisher, const NodeId& key, const Bytes* subkey,
                             std::size_t bytes, Seconds expiration) {
  auto it = charges_.find(EntryRef{key, subkey});
  if (it == charges_.end()) {
    it = charges_.emplace(subkey ? Entry{key, true, *subkey} : Entry{key, false, {}}, Charge{}).first;
  } else {  // a newer version of the entry: the charge moves to its publisher
    uncount(it->second);
  }
  it->second = Charge{publisher, bytes, expiration};
  Usage& usage = usage_[publisher];
  usage.bytes += bytes;
  usage.entries += 1;
  expiries_.push_back({expiration, it->first});
  std::push_heap(expiries_.begin(), expiries_.end(), std::greater<>());
}

void PublisherLedger::release(const NodeId& key, const Bytes* subkey) {
  if (auto it = charges_.find(EntryRef{key, subkey}); it != charges_.end()) drop(it);
}

void PublisherLedger::release_key(const NodeId& key) {
  auto it = charges_.lower_bound(EntryRef{key, nullptr});
  while (it != charges_.end() && it->first.key == key) drop(it++);
}

void PublisherLedger::purge(Seconds now) {
  while (!expiries_.empty() && expiries_.front().at <= now) {
    std::pop_heap(expiries_.begin(), expiries_.end(), std::greater<>());
    const Expiry due = std::move(expiries_.back());
    expiries_.pop_back();
    auto it = charges_.find(due.entry);
    if (it != charges_.end() && it->second.expiration <= now) drop(it);
  }
}

std::size_t PublisherLedger::bytes_of(PeerId publisher) const {
  auto it = usage_.find(publisher);
  return it == usage_.end() ? 0 : it->second.bytes;
}

std::size_t PublisherLedger::entries_of(PeerId publisher) const {
  auto it = usage_.find(publisher);
  return it == usage_.end() ? 0 : it->second.entries;
}

void PublisherLedger::uncount(const Charge& charge) {
  auto u = usage_.find(charge.publisher);
  u->second.bytes -= charge.bytes;
  u->second.entries -= 1;
  if (u->second.entries == 0) usage_.erase(u);
}

void PublisherLedger::drop(Charges::iterator it) {
  uncount(it->second);
  charges_.erase(it);
}

}  // namespace swarmlab::core::dht
