#include "core/tracker/group.h"

#include <algorithm>


namespace swarmlab::core::tracker {

dht::NodeId dataset_key(std::string_view title) { return dht::NodeId::of_key(title, dht::kHydraIdBits); }

std::uint64_t tracker_group_id(const dht::NodeId& key, std::uint64_t generation) {
  const dht::IdBytes bytes = key.to_bytes(dht::kHydraIdBits);
  std::uint64_t id = 0;
  for (std::size_t i = 0; i < 8; ++i) id = id << 8 | bytes.data[i];
  return id + generation;
}

raft::RaftConfig tracker_raft_config(std::string_view title, const TrackerGroupOptions& options) {
  raft::RaftConfig cfg = options.raft;
  cfg.group = tracker_group_id(dataset_key(title), options.generation);
  cfg.target_size = options.replicas;
  cfg.replace_after = options.replace_after;
  return cfg;
}

std::vector<PeerId> tracker_candidates(std::string_view title, std::vector<raft::CandidatePeer> peers) {
  return raft::order_by_closeness(dataset_key(title), std::move(peers));
}

std::vector<PeerId> founding_members(const std::vector<PeerId>& closest_first, std::size_t replicas) {
  return {closest_first.begin(), closest_first.begin() + static_cast<std::ptrdiff_t>(std::min(replicas, closest_first.size()))};
}

}  // namespace swarmlab::core::tracker
