#pragma once
// One dataset's tracker as a replicated state machine (docs/hydra.md §2): its title, creator and
// files, who contributed which files, who is downloading, and who seeds (a downloader that has
// completed every file becomes a seeder). Commands and results are in commands.h; it applies
// entries, commands stamped by the leader with the peer that sent them (the origin).
//
// Who may do what (anything else gets Unauthorized and changes nothing):
// - CreateDataset: a peer, in its own name (creator = origin);
// - AddFile: the creator;
// - RecordContribution, RemovePeer: the peer named, or the creator;
// - DownloadStarted, DownloadCompleted: the peer named;
// - Query, Export: anyone.
// Sessions are per origin and client id: a peer that uses another's client id opens a session of
// its own, so it can neither replay nor stall someone else's commands.
//
// Exactly-once client sessions as in raft::KvStateMachine: each client numbers its commands 1, 2,
// 3, …; a command whose seq equals the client's last one is not executed again (an update gets its
// cached status, a read is answered afresh, which is still linearizable), an older one gets Stale.
// Only an update's one-byte status is cached, so a session costs a few bytes; at most
// TrackerLimits::max_sessions are kept, and a new client beyond that evicts the one idle longest
// (its later retries of old commands may then run again).
//
// Deterministic and total: a malformed command gets Malformed, a command that would exceed a limit
// gets Full, and apply() never throws. restore() decodes strictly and throws DecodeError, leaving
// the state as it was.
#include <cstdint>
#include <map>
#include <utility>
#include <span>

#include "core/raft/state_machine.h"
#include "core/tracker/commands.h"

namespace swarmlab::core::tracker {

class TrackerStateMachine final : public raft::StateMachine {
 public:
  explicit TrackerStateMachine(TrackerLimits limits = {}) : limits_(limits) {}

  Bytes apply(std::span<const std::uint8_t> command) override;
  Bytes snapshot() const override;
  void restore(std::span<const std::uint8_t> snapshot) override;

  const DatasetInfo& info() const { return info_; }
  // The last seq applied for client `client` of peer `origin` (0: none), e.g. to tell which
  // updates a snapshot holds.
  std::uint64_t last_seq(PeerId origin, std::uint64_t client) const;
  std::size_t sessions() const { return sessions_.size(); }
  std::uint64_t applied() const { return applied_; }  // commands executed, not counting duplicates

 private:
  struct Session {
    std::uint64_t last_seq = 0;
    TrackerStatus last_status = TrackerStatus::Ok;  // of the last update
    std::uint64_t last_used = 0;                     // `applied_` then, for eviction
  };
  TrackerResult execute(const TrackerCommand& c);
  bool authorized(const TrackerCommand& c, PeerId origin) const;
  using SessionKey = std::pair<PeerId, std::uint64_t>;  // origin, client id
  Session* session_for(const SessionKey& key);

  TrackerLimits limits_;
  DatasetInfo info_;
  std::map<SessionKey, Session> sessions_;
  std::uint64_t applied_ = 0;
};

}  // namespace swarmlab::core::tracker
