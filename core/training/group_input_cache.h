#pragma once
// The planner input of a group (core/matchmaking/group_plan.h group_capacities, with the
// collaboration's routes, batch and gradient size), shared by the members a process hosts. Every
// member of a group asks for it at the same instant; each building and keeping its own copy (and
// the roles cache comparing each copy) was about a fifth of the 256-peer benchmark's profile.
#include <memory>
#include <vector>

#include "core/matchmaking/group.h"
#include "core/planner/planner.h"
#include "core/relay/reachability.h"

namespace swarmlab::core::training {

class GroupInputCache {
 public:
  // The input for `group`'s members in group order, `reachability`'s routes added (null: none).
  // The previous answer when the members, batch, gradient size and routes are the same: members
  // compare by their attachments (matchmaking::Attachment), so consecutive groups of the same
  // peers cost no decoding. Never modified once returned.
  std::shared_ptr<const planner::PlannerInput> input(const matchmaking::Group& group, double target_batch,
                                                     double gradient_bits,
                                                     const std::shared_ptr<const relay::Reachability>& reachability);

 private:
  std::vector<matchmaking::GroupMember> members_;
  double target_batch_ = 0, gradient_bits_ = 0;
  std::shared_ptr<const relay::Reachability> reachability_;
  std::shared_ptr<const planner::PlannerInput> last_;
};

}  // namespace swarmlab::core::training
