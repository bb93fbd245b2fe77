#include "core/tracker/group.h"

#include <algorithm>

#include "core/dht/sha256.h"

namespace swarmlab::core::tracker {

dht::NodeId dataset_key(std::string_view title) {
  const dht::Sha256Digest d = dht::sha256(title);
  return dht::NodeId::from_bytes(std::span<const std::uint8_t, dht::NodeId::kBytes>(d.data(), dht::NodeId::kBytes));
}

std::uint64_t tracker_group_id(const dht::NodeId& key, std::uint64_t generation) {
  const auto bytes = key.to_bytes();
  std::uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = id << 8 | bytes[static_cast<std::size_t>(i)];
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
