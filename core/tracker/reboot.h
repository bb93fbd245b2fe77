#pragma once
// Rebooting a tracker group that was lost entirely (docs/hydra.md §2: the dataset's creator keeps
// snapshots so that a tracker group lost entirely can be restarted). The creator's TrackerBackup
// reads the whole state (an Export command, through the log like any read) every `interval`; when
// every replica is gone, whoever holds the latest snapshot plans a new group on the peers now
// closest to the dataset's key (plan_reboot: the next generation, so a new Raft group id), and its
// TrackerRebooter asks each of them over the network to host it (reboot_messages.h); each new
// member's TrackerHost starts it from reboot_storage(): the snapshot as the group's initial
// snapshot, with the new members as its configuration. Updates applied after the snapshot are lost; each client can
// tell which of its acknowledged ones (TrackerClient::lost_since_reboot with restored_last_seq).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/raft/candidates.h"
#include "core/raft/storage.h"
#include "core/tracker/client.h"
#include "core/tracker/group.h"
#include "core/tracker/reboot_messages.h"

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

struct RebootOutcome {
  RebootPlan plan;
  bool ok = false;               // every founding member hosts the new generation
  std::vector<PeerId> hosting;   // peers that answered Hosting, ascending
  std::vector<PeerId> refused;   // peers that answered anything else, ascending
  Seconds started = 0, finished = 0;
};

// The creator's side of a reboot over the network. reboot() plans the next generation on the live
// peers, sends every candidate its RebootRequest (the founding members with the snapshot, the
// others without: they wait to be added and get the state from the leader), sends it again every
// `retry` to those that have not answered, and reports once every founding member hosts the group
// (ok), as soon as a founding member refuses, or at `timeout`. The caller then points its clients
// at plan.raft.group. Its replies reach it through the peer's TrackerHost (attach_rebooter).
class TrackerRebooter final : public Service {
 public:
  using Done = std::function<void(const RebootOutcome&)>;

  explicit TrackerRebooter(Environment& env, Seconds retry = 0.3, Seconds timeout = 10);
  ~TrackerRebooter() override;
  TrackerRebooter(const TrackerRebooter&) = delete;
  TrackerRebooter& operator=(const TrackerRebooter&) = delete;

  // Throws std::logic_error while another reboot is under way, std::invalid_argument when there is
  // no live peer to found the group on. `done` never runs inside this call.
  void reboot(const TrackerSnapshot& snapshot, std::vector<raft::CandidatePeer> live_peers,
              TrackerGroupOptions options, Done done);
  bool busy() const { return static_cast<bool>(done_); }

  void handle(PeerId from, const Message& message) override;  // RebootReplies
  // A broken connection loses a request or its reply; the next retry covers it.
  void on_link_failure(PeerId) override {}
  std::uint64_t requests_sent() const { return requests_sent_; }
  std::uint64_t rejected() const { return rejected_; }  // replies malformed, stale or from strangers

 private:
  void send_unanswered();
  void finish(bool ok);

  Environment& env_;
  Seconds retry_, timeout_;
  RebootRequest request_;  // its ids and generation match the replies
  // The request encoded once per reboot: with the snapshot (founding members) and without.
  std::vector<std::uint8_t> with_state_, without_state_;
  RebootOutcome outcome_;
  std::set<PeerId> unanswered_;
  Done done_;
  TimerHandle retry_timer_ = 0, timeout_timer_ = 0;
  std::uint64_t next_request_id_ = 1;
  std::uint64_t requests_sent_ = 0, rejected_ = 0;
};

// The seq of the last update of client `client` of peer `origin` the state holds (0: none); throws
// DecodeError like restore().
std::uint64_t restored_last_seq(std::span<const std::uint8_t> state, PeerId origin, std::uint64_t client,
                                const TrackerLimits& limits = {});

}  // namespace swarmlab::core::tracker
