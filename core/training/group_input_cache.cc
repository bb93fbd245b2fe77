#include "core/training/group_input_cache.h"

#include "core/matchmaking/group_plan.h"

namespace swarmlab::core::training {

std::shared_ptr<const planner::PlannerInput> GroupInputCache::input(
    const matchmaking::Group& group, double target_batch, double gradient_bits,
    const std::shared_ptr<const relay::Reachability>& reachability) {
  if (last_ && group.members == members_ && target_batch == target_batch_ && gradient_bits == gradient_bits_ &&
      reachability == reachability_)
    return last_;
  auto input = std::make_shared<planner::PlannerInput>(matchmaking::group_capacities(group));
  if (reachability) reachability->add_routes(*input, group.peers());
  input->target_batch = target_batch;
  input->gradient_bits = gradient_bits;
  members_ = group.members;
  target_batch_ = target_batch;
  gradient_bits_ = gradient_bits;
  reachability_ = reachability;
  last_ = std::move(input);
  return last_;
}

}  // namespace swarmlab::core::training
