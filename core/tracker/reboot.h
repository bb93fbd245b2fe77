#pragma once
// Rebooting a tracker group that was lost entirely (docs/hydra.md §2: the dataset's creator keeps
// snapshots so that a tracker group lost entirely can be restarted). The creator's TrackerBackup
// reads the whole state (an Export command, through the log like any read) every `interval`; when
// every replica is gone, whoever holds the latest snapshot plans a new group on the peers now
// closest to the dataset's key (plan_reboot: the next generation, so a new Raft group id) and each
// new member starts from reboot_storage(): the snapshot as the group's initial snapshot, with the
// new members as its configuration. Updates applied after the snapshot are lost; each client can
// tell which of its acknowledged ones (TrackerClient::lost_since_reboot with restored_last_seq).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/raft/candidates.h"
#include "core/raft/storage.h"
#include "core/tracker/client.h"
#include "core/tracker/group.h"

namespace swarmlab::core::tracker {

struct TrackerSnapshot {
  std::string title;
  std::uint64_t generation = 0;  // of the group it was read from
  Bytes state;                   // TrackerStateMachine::snapshot()
  Seconds requested_at = 0;      // when the Export was submitted: it holds every update acked before
  Seconds taken_at = 0;          // when the reply arrived
};

// The creator's side: periodic snapshots of its dataset's tracker, through its TrackerClient.
class TrackerBackup {
 public:
  TrackerBackup(Environment& env, TrackerClient& client, std::string title, std::uint64_t generation, Seconds interval);
  ~TrackerBackup();
  TrackerBackup(const TrackerBackup&) = delete;
  TrackerBackup& operator=(const TrackerBackup&) = delete;

  // Asks for a snapshot now (unless one is already on its way), then every interval.
  void start();
  void stop();
  // The generation of the group the client now talks to (after a reboot).
  void set_generation(std::uint64_t generation) { generation_ = generation; }
  const std::optional<TrackerSnapshot>& latest() const { return latest_; }
  bool waiting() const { return in_flight_; }  // an Export is on its way
  std::uint64_t snapshots_taken() const { return taken_; }

 private:
  void request();

  Environment& env_;
  TrackerClient& client_;
  std::string title_;
  std::uint64_t generation_;
  Seconds interval_;
  bool in_flight_ = false;
  TimerHandle timer_ = 0;
  std::optional<TrackerSnapshot> latest_;
  std::uint64_t taken_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Storage for a member of a group rebooted from `state`: the state as the initial snapshot (at
// index 1, term 1) with `members` as its configuration. Throws DecodeError when the state does not
// restore, so a bad snapshot never founds a group.
raft::MemoryStorage reboot_storage(std::span<const std::uint8_t> state, const raft::Configuration& members,
                                   const TrackerLimits& limits = {});

struct RebootPlan {
  raft::RaftConfig raft;            // the new generation's settings
  std::vector<PeerId> candidates;   // live peers, closest to the key first
  raft::Configuration members;      // the founding members: the closest `replicas` of them
};
// The new group for the snapshot's dataset on `live_peers` (the peers still reachable), one
// generation after the snapshot's.
RebootPlan plan_reboot(const TrackerSnapshot& snapshot, std::vector<raft::CandidatePeer> live_peers,
                       TrackerGroupOptions options);

// The seq of `client`'s last update the state holds (0: none); throws DecodeError like restore().
std::uint64_t restored_last_seq(std::span<const std::uint8_t> state, std::uint64_t client,
                                const TrackerLimits& limits = {});

}  // namespace swarmlab::core::tracker
