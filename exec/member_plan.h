#pragma once
// The plan of a started live round, computed identically by every member from the coordinator's
// Start message: the strategy's roles (core::averaging::assign_roles) over the members' announced
// role inputs, then the round plan with member positions mapped back to peer ids.
#include <cstdint>

#include "core/averaging/role_assignment.h"
#include "core/averaging/round_plan.h"
#include "exec/round_messages.h"

namespace swarmlab::exec {

struct PlanInputs {
  core::averaging::Strategy strategy = core::averaging::Strategy::Planned;
  std::uint64_t length = 0;  // elements averaged
  core::codec::Codec codec = core::codec::Codec::Fp32;
  std::uint64_t part_bytes = core::averaging::kDefaultPartBytes;
  double target_batch = 1;   // the planner's B (only matters with compute in the objective)
};

// Throws std::invalid_argument when the strategy cannot run with these members.
core::averaging::RoundPlan member_plan(const StartMsg& start, const PlanInputs& inputs);

}  // namespace swarmlab::exec
