#pragma once
// From an assembled group to the averaging round it runs: each member attaches its capacity to
// its join request (Matchmaker::set_gathered(encode_announcement(...))), every member decodes the same
// capacities in the same order, and so computes the same roles and the same RoundPlan.
//
//   auto roles = averaging::assign_roles(averaging::Strategy::AllReduce, group_capacities(group));
//   auto plan = plan_for_group(group, roles, length, codec::Codec::Fp16);
// (The attachment's encoding: core/matchmaking/announcement_codec.h.)
#include <cstdint>
#include <span>
#include <vector>

#include "core/averaging/role_assignment.h"
#include "core/averaging/round_plan.h"
#include "core/matchmaking/group.h"
#include "core/planner/planner.h"

namespace swarmlab::core::matchmaking {

// The members' capacities, in group order. A member whose attachment does not decode is taken to
// have no compute and no bandwidth (it neither sends nor reduces); client mode comes from the group.
planner::PlannerInput group_capacities(const Group& group);
// One member's announced capacity by the same rule: no compute and no bandwidth when it does not
// decode.
planner::PeerCapacity announced_capacity(std::span<const std::uint8_t> gathered);

// make_round_plan over the group's members: round id = group id, member i of `roles` is
// group.members[i].
averaging::RoundPlan plan_for_group(const Group& group, const averaging::RoleAssignment& roles, std::uint64_t length,
                                    codec::Codec codec, std::uint64_t part_bytes = averaging::kDefaultPartBytes);

}  // namespace swarmlab::core::matchmaking
