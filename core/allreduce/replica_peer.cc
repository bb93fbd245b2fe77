#include "core/allreduce/replica_peer.h"

#include "core/service_ids.h"

namespace swarmlab::core::allreduce {

raft::RaftConfig replica_group_raft_config(std::uint64_t group_id) {
  raft::RaftConfig c;
  c.group = group_id;
  c.check_quorum = false;
  return c;
}

ReplicaPeer::ReplicaPeer(Environment& env, raft::RaftConfig config, std::vector<PeerId> members)
    : env_(env), storage_(raft::Configuration::of(std::move(members))) {
  log_.set_on_step([this](const StepEntry& e) {
    if (round_) round_->on_step_committed(e);
  });
  raft::RaftHooks hooks;
  hooks.on_role = [this](raft::Role role, raft::Term) {
    if (round_) round_->on_role(role);
  };
  hooks.on_apply = [this](raft::Index, const raft::LogEntry&, std::span<const std::uint8_t>) {
    if (round_) round_->on_raft_applied();
  };
  raft_ = std::make_unique<raft::RaftNode>(env_, config, storage_, log_, std::move(hooks));
}

ReplicaPeer::~ReplicaPeer() {
  round_.reset();
  raft_.reset();
}

void ReplicaPeer::start_round(ReplicaGroupPlan plan, std::span<float> values, ReplicaTimeouts timeouts,
                              ReplicatedAllReduce::Done done) {
  round_.reset();
  round_ = std::make_unique<ReplicatedAllReduce>(env_, *raft_, log_, std::move(plan), values, timeouts, std::move(done));
  round_->start();
}

void ReplicaPeer::handle(PeerId from, const Message& message) {
  const auto service = peek_service(message.bytes);
  if (service == ServiceId::Raft) raft_->handle(from, message);
  else if (service == ServiceId::AllReduce && round_) round_->handle(from, message);
}

void ReplicaPeer::on_link_failure(PeerId peer) {
  raft_->on_link_failure(peer);
  if (round_) round_->on_link_failure(peer);
}

}  // namespace swarmlab::core::allreduce
