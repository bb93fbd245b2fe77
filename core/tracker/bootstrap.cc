#include "core/tracker/bootstrap.h"

#include <algorithm>

#include "core/tracker/group.h"

namespace swarmlab::core::tracker {

dht::NodeId BootstrapDirectory::assign_id(PeerId peer) {
  auto it = ids_.find(peer);
  if (it != ids_.end()) return it->second;
  dht::NodeId id = dht::NodeId::random(rng_, dht::kHydraIdBits);
  while (taken_.count(id)) id = dht::NodeId::random(rng_, dht::kHydraIdBits);  // 2^-256 per draw: never in practice
  taken_.insert(id);
  ids_.emplace(peer, id);
  return id;
}

std::optional<dht::NodeId> BootstrapDirectory::id_of(PeerId peer) const {
  auto it = ids_.find(peer);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<PeerId> BootstrapDirectory::closest_peers(const dht::NodeId& target, std::size_t n,
                                                      std::optional<PeerId> except) const {
  std::vector<raft::CandidatePeer> peers;
  peers.reserve(ids_.size());
  for (const auto& [peer, id] : ids_)
    if (peer != except) peers.push_back({peer, id});
  std::vector<PeerId> out = raft::order_by_closeness(target, std::move(peers));
  if (out.size() > n) out.resize(n);
  return out;
}

bool BootstrapDirectory::register_dataset(std::string title, PeerId creator) {
  if (title.empty() || catalogue_.size() >= max_datasets_ || catalogue_.count(title)) return false;
  CatalogueEntry e;
  e.title = title;
  e.creator = creator;
  e.key = dataset_key(title);
  catalogue_.emplace(std::move(title), std::move(e));
  return true;
}

const CatalogueEntry* BootstrapDirectory::find(std::string_view title) const {
  auto it = catalogue_.find(title);
  return it == catalogue_.end() ? nullptr : &it->second;
}

std::vector<std::string> BootstrapDirectory::titles() const {
  std::vector<std::string> out;
  for (const auto& [title, e] : catalogue_) out.push_back(title);
  return out;
}

bool BootstrapDirectory::report_leader(std::string_view title, std::uint64_t generation, std::uint64_t term, PeerId leader,
                                       Seconds now) {
  auto it = catalogue_.find(title);
  if (it == catalogue_.end()) return false;
  CatalogueEntry& e = it->second;
  if (generation < e.generation) return false;
  if (generation == e.generation && e.leader &&
      (term < e.leader_term || (term == e.leader_term && *e.leader != leader)))
    return false;
  e.generation = generation;
  e.leader = leader;
  e.leader_term = term;
  e.leader_reported_at = now;
  return true;
}

bool BootstrapDirectory::set_generation(std::string_view title, std::uint64_t generation) {
  auto it = catalogue_.find(title);
  if (it == catalogue_.end() || generation <= it->second.generation) return false;
  it->second.generation = generation;
  it->second.leader.reset();
  it->second.leader_term = 0;
  return true;
}

}  // namespace swarmlab::core::tracker
