#pragma once
// Hosting a dataset's tracker (docs/hydra.md §2): TrackerReplica is one member of a tracker group (a
// raft::RaftNode driving a TrackerStateMachine, with its storage), and TrackerHost is a peer's Raft
// service for every tracker group it serves, routing each message by its group id (a peer close to
// several datasets' keys replicates several trackers).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "core/env.h"
#include "core/raft/node.h"
#include "core/raft/storage.h"
#include "core/tracker/commands.h"
#include "core/tracker/state_machine.h"

namespace swarmlab::core::tracker {

class TrackerReplica {
 public:
  // `storage`: MemoryStorage(founding config) for a founding member, an empty one for a candidate
  // that waits to be added, reboot_storage() for a member of a group rebooted from a snapshot.
  // `candidates`: every peer that may replicate the group, closest to its key first.
  TrackerReplica(Environment& env, raft::RaftConfig config, raft::MemoryStorage storage,
                 std::vector<PeerId> candidates, raft::RaftHooks hooks = {}, TrackerLimits limits = {});
  TrackerReplica(const TrackerReplica&) = delete;
  TrackerReplica& operator=(const TrackerReplica&) = delete;

  // Crash: the node and the state machine go (timers cancelled), the storage stays.
  void crash();
  // Restarts from the storage: the machine is rebuilt from the snapshot, the log re-applied.
  void restart();
  bool running() const { return node_ != nullptr; }

  void receive(PeerId from, std::span<const std::uint8_t> bytes) {
    if (node_) node_->receive(from, bytes);
  }
  std::uint64_t group() const { return config_.group; }
  raft::RaftNode* node() { return node_.get(); }
  const raft::RaftNode* node() const { return node_.get(); }
  // Null while crashed.
  const TrackerStateMachine* machine() const { return machine_.get(); }
  const raft::MemoryStorage& storage() const { return storage_; }

 private:
  Environment& env_;
  raft::RaftConfig config_;
  raft::MemoryStorage storage_;
  std::vector<PeerId> candidates_;
  raft::RaftHooks hooks_;
  TrackerLimits limits_;
  std::unique_ptr<TrackerStateMachine> machine_;
  std::unique_ptr<raft::RaftNode> node_;
};

// A peer's Raft service (ServiceId::Raft) for its tracker groups and tracker clients: a ClientReply
// goes to the client attached for its group, every other message to the replica of its group;
// messages of groups it does not serve, and undecodable headers, are counted and dropped.
class TrackerHost final : public Service {
 public:
  explicit TrackerHost(Environment& env) : env_(env) {}

  TrackerReplica& host(raft::RaftConfig config, raft::MemoryStorage storage, std::vector<PeerId> candidates,
                       raft::RaftHooks hooks = {}, TrackerLimits limits = {});
  TrackerReplica* replica(std::uint64_t group);
  // The peer stops serving the group and forgets it (a permanent loss, or leaving).
  void drop(std::uint64_t group) { replicas_.erase(group); }
  std::vector<std::uint64_t> groups() const;

  // Where this peer's ClientReplies of `group` go (a TrackerClient); it must outlive the attachment.
  void attach_client(std::uint64_t group, Service& client) { clients_[group] = &client; }
  void detach_client(std::uint64_t group) { clients_.erase(group); }

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  std::uint64_t dropped() const { return dropped_; }

 private:
  Environment& env_;
  std::map<std::uint64_t, std::unique_ptr<TrackerReplica>> replicas_;
  std::map<std::uint64_t, Service*> clients_;
  std::uint64_t dropped_ = 0;
};

// The group id and kind of a Raft message, read from its header alone; nullopt when the header
// does not decode.
struct RaftHeader {
  raft::MessageKind kind;
  std::uint64_t group;
};
std::optional<RaftHeader> peek_raft_header(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::tracker
