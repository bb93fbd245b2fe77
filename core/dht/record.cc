#include "core/dht/record.h"

#include <algorithm>
#include <limits>

namespace swarmlab::core::dht {
Seconds Record::expiration() const {
  if (!is_dictionary()) return value().expiration;
  Seconds latest = -std::numeric_limits<Seconds>::infinity();
  for (const auto& [subkey, v] : dictionary()) latest = std::max(latest, v.expiration);
  return latest;
}

void Record::recount() {
  if (!is_dictionary()) {
    footprint_ = entry_footprint(nullptr, value());
    earliest_ = value().expiration;
    return;
  }
  footprint_ = kEntryOverhead;
  earliest_ = std::numeric_limits<Seconds>::infinity();
  for (const auto& [subkey, v] : dictionary()) {
    footprint_ += entry_footprint(&subkey, v);
    earliest_ = std::min(earliest_, v.expiration);
  }
}

bool Record::drop_expired(Seconds now) {
  if (!is_dictionary()) return value().expiration > now;
  auto& d = std::get<Dictionary>(content_);
  if (earliest_ > now) return !d.empty();
  std::erase_if(d, [now](const auto& entry) { return entry.second.expiration <= now; });
  recount();
  return !d.empty();
}

std::size_t Record::footprint() const { return footprint_; }

bool Record::merge_plain(const TimedValue& incoming) {
  if (!is_dictionary()) {
    const TimedValue& held = value();
    if (incoming.expiration > held.expiration) {
      content_ = incoming;
      recount();
      return true;
    }
    return incoming == held;
  }
  if (incoming.expiration > expiration()) {
    content_ = incoming;
    recount();
    return true;
  }
  return false;
}

bool Record::merge_subkey(const Bytes& subkey, const TimedValue& incoming) {
  if (!is_dictionary()) {
    if (value().expiration >= incoming.expiration) return false;
    content_ = Dictionary{{subkey, incoming}};
    recount();
    return true;
  }
  auto& d = std::get<Dictionary>(content_);
  auto [it, inserted] = d.try_emplace(subkey, incoming);
  if (inserted) {
    footprint_ += entry_footprint(&subkey, incoming);
    earliest_ = std::min(earliest_, incoming.expiration);
    return true;
  }
  if (incoming.expiration > it->second.expiration) {
    // The replaced entry expired earlier: earliest_ stays a lower bound.
    footprint_ = footprint_ - it->second.value.size() + incoming.value.size();
    it->second = incoming;
    return true;
  }
  return incoming == it->second;
}

void Record::merge(const Record& other) {
  if (!other.is_dictionary()) {
    merge_plain(other.value());
    return;
  }
  for (const auto& [subkey, v] : other.dictionary()) merge_subkey(subkey, v);
}

Record make_record(const Bytes* subkey, TimedValue value) {
  if (!subkey) return Record(std::move(value));
  return Record(Dictionary{{*subkey, std::move(value)}});
}

}  // namespace swarmlab::core::dht
