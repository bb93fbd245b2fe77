#include "exec/member_plan.h"

namespace swarmlab::exec {

core::averaging::RoundPlan member_plan(const StartMsg& start, const PlanInputs& inputs) {
  core::planner::PlannerInput in;
  for (const auto& [peer, a] : start.members)
    in.peers.push_back({a.compute_sps, a.download_bps, a.upload_bps, a.client_mode});
  in.target_batch = inputs.target_batch;
  in.gradient_bits = 8.0 * static_cast<double>(core::codec::encoded_size(inputs.codec, inputs.length));
  const core::averaging::RoleAssignment roles = core::averaging::assign_roles(inputs.strategy, in);
  core::averaging::RoundPlan plan =
      core::averaging::make_round_plan(start.round, roles, inputs.length, inputs.codec, inputs.part_bytes);
  // make_round_plan numbers members by position in the Start message; pacing is by position too.
  for (auto& m : plan.members) m = start.members[m].first;
  return plan;
}

}  // namespace swarmlab::exec
