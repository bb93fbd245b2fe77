#pragma once
// A client of a dataset's tracker group (docs/hydra.md §2): sends TrackerCommands as Raft
// ClientRequests, one at a time in submission order, and reports each result through a callback.
// It numbers its commands 1, 2, 3, … (the state machine's session seq, also the request id); a
// timeout re-sends the same command with the same seq to the next server, so a command whose reply
// was lost, or whose leader failed after committing it, is executed at most once. A NotLeader
// reply is followed to the leader it names, or to the next server when it names none.
//
// It keeps the seq of every update the group acknowledged, so that after the group is rebooted
// from a snapshot it can say exactly which acknowledged updates the snapshot lacks
// (lost_since_reboot).
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "core/env.h"
#include "core/raft/messages.h"
#include "core/tracker/commands.h"

namespace swarmlab::core::tracker {

struct TrackerClientOptions {
  Seconds request_timeout = 0.3;  // then the same command goes to the next server
  Seconds retry_backoff = 0.02;   // after a NotLeader without a usable hint
  std::size_t max_attempts = 0;   // sends per command before giving up; 0: never give up
  raft::WireLimits limits;
  TrackerLimits tracker_limits;
};

class TrackerClient final : public Service {
 public:
  // The command's result, or nullopt when the client gave up (max_attempts) or was reset.
  using Callback = std::function<void(std::uint64_t seq, const std::optional<TrackerResult>& result)>;

  // `servers`: the group's likely members, closest to the key first (the first is tried first).
  TrackerClient(Environment& env, std::uint64_t group, std::uint64_t client_id, std::vector<PeerId> servers,
                TrackerClientOptions options = {});
  ~TrackerClient() override;
  TrackerClient(const TrackerClient&) = delete;
  TrackerClient& operator=(const TrackerClient&) = delete;

  // Queues a command (its client and seq are filled in here); returns its seq.
  std::uint64_t submit(TrackerCommand command, Callback done);
  // Points the client at another group (a rebooted one) and its servers; the command in flight, if
  // any, is re-sent there with the same seq.
  void retarget(std::uint64_t group, std::vector<PeerId> servers);

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  std::uint64_t group() const { return group_; }
  std::uint64_t client_id() const { return client_id_; }
  bool busy() const { return !queue_.empty(); }
  // Since when the command at the head of the queue has waited for its result (since it became
  // the head, or since the last retarget); nullopt when nothing waits.
  std::optional<Seconds> waiting_since() const {
    return queue_.empty() ? std::nullopt : std::optional<Seconds>(head_since_);
  }
  std::size_t queued() const { return queue_.size(); }
  std::optional<PeerId> leader_hint() const { return leader_; }
  // Seqs of the updates the group acknowledged, ascending.
  const std::vector<std::uint64_t>& acknowledged_updates() const { return acknowledged_; }
  // The acknowledged updates a rebooted group lacks: those above the session seq its snapshot
  // restored for this client (TrackerStateMachine::last_seq).
  std::vector<std::uint64_t> lost_since_reboot(std::uint64_t restored_last_seq) const;

  struct Stats {
    std::uint64_t requests_sent = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t redirects = 0;   // NotLeader replies
    std::uint64_t malformed = 0;   // replies that did not decode
    std::uint64_t gave_up = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Pending {
    TrackerCommand command;
    Callback done;
    std::size_t attempts = 0;
  };
  void send_head();
  void arm_timer(Seconds delay);  // then send_head()
  void next_server();
  void finish_head(const std::optional<TrackerResult>& result);

  Environment& env_;
  std::uint64_t group_;
  std::uint64_t client_id_;
  std::vector<PeerId> servers_;
  TrackerClientOptions options_;
  std::size_t target_ = 0;          // index into servers_, unless leader_ is set
  std::optional<PeerId> leader_;
  std::uint64_t next_seq_ = 1;
  std::deque<Pending> queue_;
  Seconds head_since_ = 0;
  TimerHandle timer_ = 0;
  std::vector<std::uint64_t> acknowledged_;
  Stats stats_;
};

}  // namespace swarmlab::core::tracker
