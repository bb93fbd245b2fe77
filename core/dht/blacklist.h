#pragma once
// Peers that failed to answer are not contacted for a while, with exponential backoff (hivemind's
// Blacklist): the n-th consecutive failure (n = 0 for the first) bans a peer for base · rate^n
// seconds. Failures while banned do not count (the peer was not contacted); any success clears the
// record. Keyed by transport peer, since that is what failed.
#include <cstdint>
#include <map>

#include "core/env.h"

namespace swarmlab::core::dht {

class Blacklist {
 public:
  Blacklist(Seconds base_s, double backoff, int max_exponent)
      : base_s_(base_s), backoff_(backoff), max_exponent_(max_exponent) {}

  void register_failure(PeerId peer, Seconds now);
  void register_success(PeerId peer) { entries_.erase(peer); }
  bool is_banned(PeerId peer, Seconds now) const;
  // When the current ban ends (0 when the peer is not known).
  Seconds banned_until(PeerId peer) const;
  // Consecutive failures recorded for `peer`.
  int failures(PeerId peer) const;
  // Forgets peers whose ban ended long ago (bounded memory under churn).
  void forget_older_than(Seconds horizon);
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int failures = 0;
    Seconds until = 0;
  };
  Seconds base_s_;
  double backoff_;
  int max_exponent_;
  std::map<PeerId, Entry> entries_;
};

}  // namespace swarmlab::core::dht
