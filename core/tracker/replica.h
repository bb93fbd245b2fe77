#pragma once
// Hosting a dataset's tracker (docs/hydra.md §2): TrackerReplica is one member of a tracker group (a
// raft::RaftNode driving a TrackerStateMachine, with its storage), and TrackerHost is a peer's Raft
// service for every tracker group it serves, routing each message by its group id (a peer close to
// several datasets' keys replicates several trackers).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/raft/node.h"
#include "core/raft/storage.h"
#include "core/tracker/commands.h"
#include "core/tracker/group.h"
#include "core/tracker/reboot_messages.h"
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
//
// It is also the peer's Tracker service (ServiceId::Tracker, reboot_messages.h): once
// serve_reboots() was called it answers RebootRequests by hosting the requested generation (from
// the snapshot when it is a founding member, empty as a candidate otherwise) and dropping the
// dataset's older generations; RebootReplies go to the attached TrackerRebooter.
class TrackerHost final : public Service {
 public:
  explicit TrackerHost(Environment& env) : env_(env) {}

  // The Raft hooks of a replica of `generation` of a dataset's tracker.
  using HooksFor = std::function<raft::RaftHooks(std::uint64_t generation)>;
  // Accepts RebootRequests from now on, founding groups with these options (every peer of a
  // collaboration uses the same; generation comes from the request).
  void serve_reboots(TrackerGroupOptions options, HooksFor hooks = {}, TrackerLimits limits = {});
  // Where this peer's RebootReplies go; it must outlive the attachment.
  void attach_rebooter(Service& rebooter) { rebooter_ = &rebooter; }
  void detach_rebooter() { rebooter_ = nullptr; }

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
  std::uint64_t reboots_hosted() const { return reboots_hosted_; }

 private:
  void on_tracker_message(PeerId from, const Message& message);
  RebootStatus on_reboot(const RebootRequest& request);

  Environment& env_;
  std::map<std::uint64_t, std::unique_ptr<TrackerReplica>> replicas_;
  std::map<std::uint64_t, Service*> clients_;
  std::uint64_t dropped_ = 0;
  // Reboots: off until serve_reboots().
  std::optional<TrackerGroupOptions> reboot_options_;
  HooksFor reboot_hooks_;
  TrackerLimits reboot_limits_;
  std::map<std::string, std::uint64_t, std::less<>> generation_;  // per dataset: the latest hosted by reboot
  Service* rebooter_ = nullptr;
  std::uint64_t reboots_hosted_ = 0;
};

// The group id and kind of a Raft message, read from its header alone; nullopt when the header
// does not decode.
struct RaftHeader {
  raft::MessageKind kind;
  std::uint64_t group;
};
std::optional<RaftHeader> peek_raft_header(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::tracker
