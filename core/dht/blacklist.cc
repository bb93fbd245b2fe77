#include "core/dht/blacklist.h"

#include <algorithm>
#include <cmath>

namespace swarmlab::core::dht {

void Blacklist::register_failure(PeerId peer, Seconds now) {
  if (!(base_s_ > 0)) return;
  Entry& e = entries_[peer];
  if (e.failures > 0 && now < e.until) return;  // still banned: this failure is not a new attempt
  const int exponent = std::min(e.failures, max_exponent_);
  e.until = now + base_s_ * std::pow(backoff_, exponent);
  ++e.failures;
}

bool Blacklist::is_banned(PeerId peer, Seconds now) const {
  auto it = entries_.find(peer);
  return it != entries_.end() && now < it->second.until;
}

Seconds Blacklist::banned_until(PeerId peer) const {
  auto it = entries_.find(peer);
  return it == entries_.end() ? 0 : it->second.until;
}

int Blacklist::failures(PeerId peer) const {
  auto it = entries_.find(peer);
  return it == entries_.end() ? 0 : it->second.failures;
}

void Blacklist::forget_older_than(Seconds horizon) {
  std::erase_if(entries_, [horizon](const auto& kv) { return kv.second.until < horizon; });
}

}  // namespace swarmlab::core::dht
