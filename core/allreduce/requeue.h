#pragma once
// What the initiator of Hydra's all-reduce does after a round that lost whole groups (docs/hydra.md
// §5): it drops them and re-queues their chunks of the mini-batch. The next round runs among the
// survivors (any count: halving_doubling.h folds in the extras), and each survivor takes a share of
// the re-queued samples in proportion to its own, so the step averages as many samples as a round
// without loss would have.
#include <cstdint>
#include <optional>
#include <set>
#include <span>

#include "core/allreduce/replicated_allreduce.h"

namespace swarmlab::core::allreduce {

// The groups a round lost, as its replicas' leaders recorded them (an outcome may be missing: a
// replica that did not finish).
std::set<std::uint32_t> lost_groups(std::span<const std::optional<ReplicaOutcome>> outcomes);

// The next round's plan: `plan` without the `lost` groups, the lost groups' weights spread over the
// survivors in proportion to theirs, and the next round id. Throws std::invalid_argument when a lost
// group is not in the plan or nobody survives.
ReplicaGroupPlan requeue_lost(const ReplicaGroupPlan& plan, const std::set<std::uint32_t>& lost);

}  // namespace swarmlab::core::allreduce
