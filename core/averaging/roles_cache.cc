#include "core/averaging/roles_cache.h"

#include <stdexcept>

#include "core/wire.h"

namespace swarmlab::core::averaging {

const RoleAssignment* RolesCache::roles(Strategy strategy, const planner::PlannerInput& input,
                                        std::optional<std::size_t> server) {
  std::vector<std::uint8_t> key;
  Writer w(key);
  w.u8(static_cast<std::uint8_t>(strategy));
  w.u64(server ? *server + 1 : 0);
  w.f64(input.target_batch);
  w.f64(input.gradient_bits);
  for (const auto& p : input.peers) {
    w.f64(p.compute_sps);
    w.f64(p.download_bps);
    w.f64(p.upload_bps);
    w.u8(p.client_mode ? 1 : 0);
  }
  for (const auto& row : input.pair_caps)
    for (double c : row) w.f64(c);
  w.u64(input.routes.size());
  for (const auto& row : input.routes)
    for (int r : row) w.u64(static_cast<std::uint64_t>(static_cast<std::int64_t>(r)));
  for (const auto& relay : input.relays) {
    w.f64(relay.download_bps);
    w.f64(relay.upload_bps);
    w.u64(relay.member ? *relay.member + 1 : 0);
  }
  if (auto it = cache_.find(key); it != cache_.end()) {
    ++hits_;
    return it->second ? &*it->second : nullptr;
  }
  ++solves_;
  bool any_sender = false;
  for (const auto& p : input.peers) any_sender |= p.compute_sps > 0;
  std::optional<RoleAssignment> solved;
  if (any_sender) {
    try {
      solved = assign_roles(strategy, input, server);
    } catch (const std::invalid_argument&) {
      // The strategy cannot run with these members (e.g. nobody reachable): no round with them.
    }
  }
  if (cache_.size() >= kMaxEntries) {
    cache_.clear();
    ++generation_;
  }
  const auto it = cache_.emplace(std::move(key), std::move(solved)).first;
  return it->second ? &*it->second : nullptr;
}

const RoundPlan& RolesCache::round_plan(std::uint64_t round_id, const RoleAssignment& roles,
                                        const std::vector<PeerId>& members, std::uint64_t length, codec::Codec codec,
                                        std::uint64_t part_bytes, const std::function<RoundPlan()>& build) {
  PlanKey key{round_id, &roles, generation_, members, length, codec, part_bytes};
  if (plan_key_ && *plan_key_ == key) return plan_;
  plan_ = build();
  plan_key_ = std::move(key);
  return plan_;
}

}  // namespace swarmlab::core::averaging
