#include "core/allreduce/requeue.h"

#include <stdexcept>

namespace swarmlab::core::allreduce {

std::set<std::uint32_t> lost_groups(std::span<const std::optional<ReplicaOutcome>> outcomes) {
  std::set<std::uint32_t> lost;
  for (const auto& o : outcomes)
    if (o)
      for (const LostChunk& c : o->lost_chunks) lost.insert(c.group);
  return lost;
}

ReplicaGroupPlan requeue_lost(const ReplicaGroupPlan& plan, const std::set<std::uint32_t>& lost) {
  if (!lost.empty() && *lost.rbegin() >= plan.groups.size())
    throw std::invalid_argument("requeue: a lost group that is not in the plan");
  if (lost.size() >= plan.groups.size()) throw std::invalid_argument("requeue: no group survived");
  double lost_weight = 0, kept_weight = 0;
  for (std::size_t g = 0; g < plan.groups.size(); ++g) (lost.count(static_cast<std::uint32_t>(g)) ? lost_weight : kept_weight) += plan.weights[g];
  ReplicaGroupPlan next = plan;
  next.round_id = plan.round_id + 1;
  next.groups.clear();
  next.weights.clear();
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    if (lost.count(static_cast<std::uint32_t>(g))) continue;
    next.groups.push_back(plan.groups[g]);
    next.weights.push_back(plan.weights[g] * (1 + lost_weight / kept_weight));
  }
  return next;
}

}  // namespace swarmlab::core::allreduce
