#pragma once
// A peer that is one replica of an all-reduce participant (docs/hydra.md §5): its group's Raft
// node (over an in-memory log), the step log it replicates, and the round in progress. It is the
// Service the environment delivers to: Raft messages go to the node, all-reduce data to the round.
// Hosts (the simulator, the core's tests) build one per peer and start each round on every
// replica.
#include <memory>
#include <vector>

#include "core/allreduce/replicated_allreduce.h"
#include "core/allreduce/step_log.h"
#include "core/raft/node.h"
#include "core/raft/storage.h"

namespace swarmlab::core::allreduce {

// Hydra's replica groups: elections in 150-300 ms (RaftConfig's defaults). The leader does not step
// down for want of a quorum: alone, it can still finish the round's steps.
raft::RaftConfig replica_group_raft_config(std::uint64_t group_id);

class ReplicaPeer final : public Service {
 public:
  // `members`: the replicas of this peer's group, itself included (founding members).
  ReplicaPeer(Environment& env, raft::RaftConfig config, std::vector<PeerId> members);
  ~ReplicaPeer() override;
  ReplicaPeer(const ReplicaPeer&) = delete;
  ReplicaPeer& operator=(const ReplicaPeer&) = delete;

  // Starts this replica's side of a round; the previous round object is released.
  void start_round(ReplicaGroupPlan plan, std::span<float> values, ReplicaTimeouts timeouts,
                   ReplicatedAllReduce::Done done);

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  raft::RaftNode& raft() { return *raft_; }
  const StepLog& log() const { return log_; }
  ReplicatedAllReduce* round() { return round_.get(); }

 private:
  Environment& env_;
  raft::MemoryStorage storage_;
  StepLog log_;
  std::unique_ptr<raft::RaftNode> raft_;
  std::unique_ptr<ReplicatedAllReduce> round_;
};

}  // namespace swarmlab::core::allreduce
