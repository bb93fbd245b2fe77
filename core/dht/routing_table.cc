#include "core/dht/routing_table.h"

#include <algorithm>
#include <stdexcept>

namespace swarmlab::core::dht {

RoutingTable::RoutingTable(NodeId self, std::size_t bucket_size, std::size_t replacement_cache_size,
                           Seconds ping_interval)
    : self_(self),
      k_(bucket_size),
      replacement_cache_size_(replacement_cache_size),
      ping_interval_(ping_interval) {
  if (k_ == 0) throw std::invalid_argument("routing table: bucket size must be positive");
}

RoutingTable::Bucket& RoutingTable::bucket_at(int index, Seconds now) {
  auto& b = buckets_[index];
  if (!b) {
    b = std::make_unique<Bucket>();
    b->last_lookup = now;  // a bucket that just came into use needs no refresh yet
  }
  return *b;
}

const RoutingTable::Bucket& RoutingTable::bucket(int index) const {
  static const Bucket kEmpty;
  const Bucket* b = find_bucket(index);
  return b ? *b : kEmpty;
}

RoutingTable::UpdateResult RoutingTable::update(const Contact& contact, Seconds now) {
  const int index = bucket_index(self_, contact.id);
  if (index < 0) return {};
  Bucket& b = bucket_at(index, now);
  auto it = std::find_if(b.entries.begin(), b.entries.end(),
                         [&](const Entry& e) { return e.contact.id == contact.id; });
  if (it != b.entries.end()) {
    // Move to the most-recently-seen end; the peer may have a new transport address.
    Entry e{contact, now};
    b.entries.erase(it);
    b.entries.push_back(e);
    if (b.pinging == contact.id) b.pinging.reset();
    return {Outcome::Refreshed, std::nullopt};
  }
  std::erase_if(b.replacements, [&](const Entry& e) { return e.contact.id == contact.id; });
  if (b.entries.size() < k_) {
    b.entries.push_back({contact, now});
    ++size_;
    ++version_;
    return {Outcome::Added, std::nullopt};
  }
  if (replacement_cache_size_ > 0) {
    if (b.replacements.size() >= replacement_cache_size_) b.replacements.erase(b.replacements.begin());
    b.replacements.push_back({contact, now});
  }
  const Entry& lru = b.entries.front();
  if (b.pinging || now - b.last_ping < ping_interval_ || now - lru.last_seen < ping_interval_)
    return {Outcome::Queued, std::nullopt};
  b.pinging = lru.contact.id;
  b.last_ping = now;
  return {Outcome::Queued, lru.contact};
}

bool RoutingTable::remove(const NodeId& id) {
  const int index = bucket_index(self_, id);
  if (index < 0 || !find_bucket(index)) return false;
  Bucket& b = *buckets_[index];
  if (b.pinging == id) b.pinging.reset();
  auto it = std::find_if(b.entries.begin(), b.entries.end(), [&](const Entry& e) { return e.contact.id == id; });
  if (it == b.entries.end()) {
    return std::erase_if(b.replacements, [&](const Entry& e) { return e.contact.id == id; }) > 0;
  }
  b.entries.erase(it);
  --size_;
  ++version_;
  if (!b.replacements.empty()) {
    // The most recently seen candidate is the likeliest to be alive.
    b.entries.push_back(b.replacements.back());
    b.replacements.pop_back();
    ++size_;
  }
  return true;
}

const RoutingTable::Entry* RoutingTable::find(const NodeId& id) const {
  const int index = bucket_index(self_, id);
  if (index < 0) return nullptr;
  const Bucket* b = index < 0 ? nullptr : find_bucket(index);
  if (!b) return nullptr;
  for (const Entry& e : b->entries)
    if (e.contact.id == id) return &e;
  return nullptr;
}

std::vector<Contact> RoutingTable::closest(const NodeId& target, std::size_t count, const NodeId* exclude) const {
  std::vector<Contact> out;
  closest(target, count, exclude, out);
  return out;
}

void RoutingTable::closest(const NodeId& target, std::size_t count, const NodeId* exclude,
                           std::vector<Contact>& out) const {
  // Relative to `target`, bucket b = bucket_index(self, target) holds the closest entries (distance
  // below 2^b), then every bucket below b (distances in [2^b, 2^(b+1))), then buckets b+1, b+2, ...
  // in order. Gather in that order until `count` are certain, then select the nearest.
  // Reused across calls (closest() runs for every request); per thread, as tables are not shared.
  // Pointers, not (distance, contact) pairs: sorting moves 8 bytes per entry, and a distance is
  // four XORs away.
  thread_local std::vector<const Contact*> found;
  found.clear();
  auto gather = [&](int i) {
    const Bucket* bucket = find_bucket(i);
    if (!bucket) return;
    for (const Entry& e : bucket->entries)
      if (!exclude || e.contact.id != *exclude) found.push_back(&e.contact);
  };
  const int b = bucket_index(self_, target);
  if (b >= 0) {
    gather(b);
    if (found.size() < count)
      for (int i = b - 1; i >= 0; --i) gather(i);
  }
  for (int i = b + 1; i < NodeId::kMaxBits && found.size() < count; ++i) gather(i);

  auto nearer = [&target](const Contact* x, const Contact* y) { return (x->id ^ target) < (y->id ^ target); };
  if (found.size() > count) {
    std::nth_element(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(count), found.end(), nearer);
    found.resize(count);
  }
  std::sort(found.begin(), found.end(), nearer);
  out.clear();
  out.reserve(found.size());
  for (const Contact* c : found) out.push_back(*c);
}

void RoutingTable::mark_looked_up(const NodeId& target, Seconds now) {
  const int index = bucket_index(self_, target);
  if (index >= 0 && find_bucket(index)) buckets_[index]->last_lookup = now;
}

std::vector<int> RoutingTable::stale_buckets(Seconds now, Seconds interval) const {
  std::vector<int> out;
  for (int i = 0; i < NodeId::kMaxBits; ++i)
    if (const Bucket* b = find_bucket(i); b && !b->entries.empty() && now - b->last_lookup >= interval)
      out.push_back(i);
  return out;
}

int RoutingTable::closest_bucket() const {
  for (int i = 0; i < NodeId::kMaxBits; ++i)
    if (const Bucket* b = find_bucket(i); b && !b->entries.empty()) return i;
  return -1;
}

std::size_t RoutingTable::replacement_count() const {
  std::size_t n = 0;
  for (const auto& b : buckets_)
    if (b) n += b->replacements.size();
  return n;
}

std::size_t RoutingTable::nonempty_buckets() const {
  std::size_t n = 0;
  for (const auto& b : buckets_)
    if (b) n += !b->entries.empty();
  return n;
}

void RoutingTable::for_each(const std::function<void(const Entry&)>& fn) const {
  for (const auto& b : buckets_)
    if (b)
      for (const Entry& e : b->entries) fn(e);
}

}  // namespace swarmlab::core::dht
