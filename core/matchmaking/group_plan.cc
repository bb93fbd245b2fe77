#include "core/matchmaking/group_plan.h"

#include "core/matchmaking/announcement_codec.h"

#include "core/wire.h"

namespace swarmlab::core::matchmaking {

planner::PeerCapacity announced_capacity(std::span<const std::uint8_t> gathered) {
  try {
    return decode_announcement(gathered).capacity;
  } catch (const DecodeError&) {
    return {};
  }
}

planner::PlannerInput group_capacities(const Group& group) {
  planner::PlannerInput input;
  input.peers.reserve(group.members.size());
  for (const GroupMember& m : group.members) {
    planner::PeerCapacity c = announced_capacity(m.gathered);
    c.client_mode = c.client_mode || m.client_mode;
    input.peers.push_back(c);
  }
  return input;
}

averaging::RoundPlan plan_for_group(const Group& group, const averaging::RoleAssignment& roles, std::uint64_t length,
                                    codec::Codec codec, std::uint64_t part_bytes) {
  averaging::RoundPlan plan = averaging::make_round_plan(group.group_id, roles, length, codec, part_bytes);
  for (PeerId& member : plan.members) member = group.members.at(member).peer;
  return plan;
}

}  // namespace swarmlab::core::matchmaking
