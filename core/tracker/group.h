#pragma once
// Where a dataset's tracker group lives (docs/hydra.md §2): its key is SHA-256 of the dataset's
// title, a 256-bit id as in Hydra's DHT (dht::kHydraIdBits); its replicas are the peers whose ids
// are closest to that key by XOR distance, the first `target_size` founding the
// group and the next ones replacing lost replicas (raft::RaftConfig::target_size, replace_after).
// A group rebooted from a snapshot (reboot.h) is a new Raft group, so its id also carries a
// generation: the old group's replicas, should any come back, can never mix with the new one.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/dht/node_id.h"
#include "core/raft/candidates.h"
#include "core/raft/node.h"

namespace swarmlab::core::tracker {

// SHA-256 of the title as a 256-bit DHT id (Hydra's width, dht::kHydraIdBits).
dht::NodeId dataset_key(std::string_view title);
// The Raft group id of generation `generation` of the dataset's tracker: the key's first 64 bits
// plus the generation (wrapping), so that one peer can route messages of several groups.
std::uint64_t tracker_group_id(const dht::NodeId& key, std::uint64_t generation);

struct TrackerGroupOptions {
  std::size_t replicas = 3;         // target size of the group (3 or 5: a majority survives 1 or 2 losses)
  Seconds replace_after = 1.0;      // a replica silent this long is removed, then replaced
  std::uint64_t generation = 0;     // bumped by each reboot from a snapshot
  raft::RaftConfig raft;            // timings and limits; group, target_size, replace_after set here
};

// The Raft settings of the dataset's tracker group.
raft::RaftConfig tracker_raft_config(std::string_view title, const TrackerGroupOptions& options);

// Peers ordered closest to the dataset's key first; the founding members are the first
// options.replicas of them.
std::vector<PeerId> tracker_candidates(std::string_view title, std::vector<raft::CandidatePeer> peers);
std::vector<PeerId> founding_members(const std::vector<PeerId>& closest_first, std::size_t replicas);

}  // namespace swarmlab::core::tracker
