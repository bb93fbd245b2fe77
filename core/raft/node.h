#pragma once
// One member of a Raft group (docs/hydra.md §2: tracker groups; §5: replica groups of the
// fault-tolerant all-reduce). Sans-IO: it is driven only by the Environment's timers and by the
// messages its host feeds to handle(), and it keeps its persistent state (term, vote, log,
// snapshot) in an injected RaftStorage. Destroying a RaftNode is a crash: its timers are
// cancelled, its volatile state is lost, and a new RaftNode built on the same storage restarts it.
//
// Implemented from the Raft paper and dissertation: randomised election timeouts, pre-vote, leader
// stickiness and check-quorum; log replication with majority commit (only entries of the leader's
// own term are committed by counting); single-server membership changes through the log; log
// compaction with InstallSnapshot; and automatic replacement of a replica the leader has not heard
// from, by the next-closest candidate. core/raft/README.md lists what is implemented and how it
// deviates.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/env.h"
#include "core/raft/messages.h"
#include "core/raft/state_machine.h"
#include "core/raft/storage.h"
#include "core/raft/types.h"

namespace swarmlab::core::raft {

struct RaftConfig {
  std::uint64_t group = 0;                // messages of other groups are ignored
  Seconds election_timeout_min = 0.150;   // a follower that hears no leader for a uniform time in
  Seconds election_timeout_max = 0.300;   // [min, max] starts an election
  Seconds heartbeat_interval = 0.050;     // the leader's AppendEntries period (also retransmission)
  bool pre_vote = true;                   // ask for votes without raising the term first
  bool check_quorum = true;               // a leader that has not heard from a majority steps down
  std::size_t max_entries_per_message = 64;
  std::size_t max_bytes_per_message = 1u << 20;
  Index snapshot_threshold = 1024;        // compact once this many applied entries follow the snapshot; 0: never
  std::size_t target_size = 0;            // replicas the leader maintains from the candidates; 0: none added
  Seconds replace_after = 0;              // a member silent this long is removed (then replaced); 0: never
  Seconds catch_up_timeout = 2.0;         // a new replica not caught up by then is passed over
  Seconds candidate_retry_after = 10.0;   // how long a removed or passed-over peer is not proposed again
  WireLimits limits;
};

enum class Role : std::uint8_t { Follower, PreCandidate, Candidate, Leader };
const char* to_string(Role role);

// Observation points for hosts and tests. They run inside the node's callbacks and must not
// destroy the node.
struct RaftHooks {
  std::function<void(Role role, Term term)> on_role;  // after every change of role
  // After a committed entry is applied (result empty unless a Command).
  std::function<void(Index index, const LogEntry& entry, std::span<const std::uint8_t> result)> on_apply;
  // After a snapshot from the leader replaced the state machine (entries up to `index` applied).
  std::function<void(Index index, Term term)> on_install_snapshot;
  // When the configuration in force changes (an appended, truncated or installed Config).
  std::function<void(const Configuration& config, Index index)> on_config;
  // What a leader appends for a client's command from `from` (unset: the command as it came). A
  // state machine that must know who asked (to authorize) gets the sender stamped in by the
  // leader, which Raft trusts as it trusts the leader with the log.
  std::function<Bytes(PeerId from, Bytes command)> stamp_client_command;
};

struct RaftStats {
  std::uint64_t messages_sent = 0;
  std::uint64_t unknown_destinations = 0;  // configuration members the environment does not know
  std::uint64_t messages_received = 0;
  std::uint64_t malformed = 0;        // undecodable, another group's, or from ourselves
  std::uint64_t rejected = 0;         // well-formed but impossible from a correct peer (dropped)
  std::uint64_t elections = 0;        // terms started as a candidate
  std::uint64_t snapshots_sent = 0;
  std::uint64_t snapshots_installed = 0;
  std::uint64_t compactions = 0;
  std::uint64_t replicas_removed = 0; // by the leader, for silence
  std::uint64_t replicas_added = 0;   // by the leader, from the candidates
};

class RaftNode final : public Service {
 public:
  // `storage` holds the persistent state (MemoryStorage(initial config) for a founding member,
  // an empty one for a peer that will be added later); `machine` starts empty and is rebuilt from
  // the storage's snapshot. Both must outlive the node.
  RaftNode(Environment& env, RaftConfig config, RaftStorage& storage, StateMachine& machine, RaftHooks hooks = {});
  ~RaftNode() override;
  RaftNode(const RaftNode&) = delete;
  RaftNode& operator=(const RaftNode&) = delete;

  // Feeds one message (first byte ServiceId::Raft). Returns false, and changes nothing, for a
  // malformed message, one for another group, or one claiming to come from this node.
  bool receive(PeerId from, std::span<const std::uint8_t> bytes);
  void handle(PeerId from, const Message& message) override { receive(from, message.bytes); }
  // Raft notices lost peers by its own timeouts; a broken link changes nothing it relies on.
  void on_link_failure(PeerId) override {}

  // Leader only: appends a command; nullopt when not the leader. It is committed (and applied,
  // through on_apply) if this node stays leader long enough, possibly later under another leader.
  std::optional<Index> propose(Bytes command);
  // Leader only: a single-server membership change, appended now and in force at once. False when
  // not the leader, when the previous change is not yet committed, when no entry of this term is
  // committed yet, or when the change is void (already a member / not a member / last member).
  bool add_member(PeerId peer);
  bool remove_member(PeerId peer);
  bool can_change_membership() const;
  // Traffic from the current leader outside Raft proves it alive, as a heartbeat would (a follower
  // of an all-reduce replica group gets megabytes of data from its leader on the connection its
  // heartbeats use, and must not start an election while they queue behind it; docs/hydra.md §5).
  // Ignored unless this node is a follower and `from` the leader it follows.
  void heard_from_leader(PeerId from);
  // Peers that may replace lost replicas, closest to the group key first (order_by_closeness).
  void set_candidates(std::vector<PeerId> closest_first) { candidates_ = std::move(closest_first); }

  PeerId self() const { return env_.self(); }
  Role role() const { return role_; }
  bool is_leader() const { return role_ == Role::Leader; }
  Term term() const { return storage_.term(); }
  std::optional<PeerId> leader() const { return leader_; }
  Index commit_index() const { return commit_; }
  Index applied_index() const { return applied_; }
  Index last_index() const { return storage_.last_index(); }
  Index snapshot_index() const { return storage_.snapshot().last_index; }
  // The term of the entry at `index`, when this node still has it (or it is the snapshot's last).
  std::optional<Term> term_at(Index index) const;
  const Configuration& config() const { return config_; }
  // The replica being caught up before it is added, if any.
  std::optional<PeerId> learner() const { return learner_; }
  const RaftStats& stats() const { return stats_; }

 private:
  struct Progress {
    Index next = 1;
    Index match = 0;
    Seconds last_ack = 0;
    bool inflight = false;
    std::optional<Seconds> snapshot_sent;
  };
  struct PendingClient {
    PeerId peer;
    std::uint64_t request_id;
    Term term;
  };

  Term last_term() const { return *term_at(last_index()); }
  bool log_up_to_date(Index last_index, Term last_term) const;
  Configuration config_at(Index index) const;
  void recompute_config();
  void set_config(Configuration config, Index index);
  std::size_t count_members(const std::set<PeerId>& peers) const;

  void send(PeerId to, RaftMessage m);
  void reset_election_timer();
  void on_election_timeout();
  void on_heartbeat();
  void become_follower(Term term, std::optional<PeerId> leader);
  void start_pre_vote();
  void start_election();
  void become_leader();
  void set_role(Role role);

  void on_vote_request(PeerId from, const RaftMessage& m);
  void on_vote_reply(PeerId from, const RaftMessage& m);
  void on_append_entries(PeerId from, RaftMessage& m);
  void on_append_reply(PeerId from, const RaftMessage& m);
  void on_install_snapshot(PeerId from, RaftMessage& m);
  void on_snapshot_reply(PeerId from, const RaftMessage& m);
  void on_client_request(PeerId from, RaftMessage& m);
  Index append_command(Bytes command, const PendingClient* client);
  // Accepts a message from a leader of term >= ours; false when it must be dropped.
  bool accept_leader(PeerId from, Term term);

  void send_append(PeerId peer, bool heartbeat);
  void broadcast_append(bool heartbeat);
  void advance_commit();
  void apply_committed();
  void maybe_compact();
  void append_config(Configuration config);
  void manage_membership();
  void fail_pending_clients();

  Environment& env_;
  RaftConfig cfg_;
  RaftStorage& storage_;
  StateMachine& machine_;
  RaftHooks hooks_;

  Role role_ = Role::Follower;
  std::optional<PeerId> leader_;
  Seconds last_leader_contact_ = 0;
  Index commit_ = 0;
  Index applied_ = 0;
  Configuration config_;
  Index config_index_ = 0;
  std::set<PeerId> votes_;

  // Leader state.
  std::map<PeerId, Progress> progress_;  // members but self, plus the learner
  Seconds leader_since_ = 0;
  Index term_start_ = 0;                 // index of this term's first entry (the no-op)
  std::optional<PeerId> learner_;
  Seconds learner_since_ = 0;
  std::map<Index, PendingClient> pending_;
  std::vector<PeerId> candidates_;
  std::map<PeerId, Seconds> passed_over_;  // peer -> until when it is not proposed

  TimerHandle election_timer_ = 0;
  TimerHandle heartbeat_timer_ = 0;
  RaftStats stats_;
};

}  // namespace swarmlab::core::raft
