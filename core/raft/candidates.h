#pragma once
// Which peers should replicate a group: the ones whose ids are closest, by XOR distance, to the
// group's key (docs/hydra.md §2: a tracker group is the set of peers closest to the hash of the
// dataset's title). A leader that replaces a lost replica takes the next peer in this order.
#include <algorithm>
#include <utility>
#include <vector>

#include "core/dht/node_id.h"
#include "core/env.h"

namespace swarmlab::core::raft {

struct CandidatePeer {
  PeerId peer = 0;
  dht::NodeId id;
};

// Peers ordered closest to `group_key` first (ties, only possible for equal ids, by peer index).
inline std::vector<PeerId> order_by_closeness(const dht::NodeId& group_key, std::vector<CandidatePeer> peers) {
  std::sort(peers.begin(), peers.end(), [&](const CandidatePeer& a, const CandidatePeer& b) {
    const auto da = a.id ^ group_key, db = b.id ^ group_key;
    return da != db ? da < db : a.peer < b.peer;
  });
  std::vector<PeerId> out;
  out.reserve(peers.size());
  for (const CandidatePeer& c : peers) out.push_back(c.peer);
  return out;
}

}  // namespace swarmlab::core::raft
