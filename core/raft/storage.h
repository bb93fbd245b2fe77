#pragma once
// Raft's persistent state: current term, vote, log and latest snapshot. A RaftNode keeps nothing
// else across a crash; every call below must be durable when it returns (a node answers a peer only
// after the storage call that the answer depends on has returned).
//
// The log holds the entries after the snapshot: indexes first_index() .. last_index(), where
// first_index() == snapshot().last_index + 1. An empty log has last_index() == snapshot().last_index.
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>

#include "core/raft/types.h"

namespace swarmlab::core::raft {

class RaftStorage {
 public:
  virtual ~RaftStorage() = default;

  virtual Term term() const = 0;
  virtual std::optional<PeerId> vote() const = 0;
  // Stores both at once (a new term always clears or sets the vote).
  virtual void save_term_and_vote(Term term, std::optional<PeerId> vote) = 0;

  virtual const Snapshot& snapshot() const = 0;
  Index first_index() const { return snapshot().last_index + 1; }
  virtual Index last_index() const = 0;
  // The entry at `index`, first_index() <= index <= last_index().
  virtual const LogEntry& entry(Index index) const = 0;

  // Appends at last_index() + 1.
  virtual void append(const LogEntry& entry) = 0;
  // Removes the entries at `from` and after (from >= first_index()).
  virtual void truncate_from(Index from) = 0;
  // Replaces the snapshot and drops the entries it covers (index <= snapshot.last_index). Entries
  // after it are kept; a caller that installs a snapshot past the end of the log, or one that
  // conflicts with it, truncates the log first.
  virtual void save_snapshot(Snapshot snapshot) = 0;
};

// Keeps everything in memory. Survives a RaftNode's destruction, so tests model a crash and a
// restart by destroying the node and building a new one on the same storage.
class MemoryStorage final : public RaftStorage {
 public:
  MemoryStorage() = default;
  // A member of a new group: every initial member starts from the same empty snapshot.
  explicit MemoryStorage(Configuration initial) { snapshot_.config = std::move(initial); }

  Term term() const override { return term_; }
  std::optional<PeerId> vote() const override { return vote_; }
  void save_term_and_vote(Term term, std::optional<PeerId> vote) override {
    term_ = term;
    vote_ = vote;
    ++writes_;
  }

  const Snapshot& snapshot() const override { return snapshot_; }
  Index last_index() const override { return snapshot_.last_index + log_.size(); }
  const LogEntry& entry(Index index) const override {
    if (index < first_index() || index > last_index()) throw std::out_of_range("raft log index");
    return log_[index - first_index()];
  }
  void append(const LogEntry& entry) override {
    log_.push_back(entry);
    ++writes_;
  }
  void truncate_from(Index from) override {
    if (from < first_index()) throw std::out_of_range("raft log truncation before the snapshot");
    if (from <= last_index()) log_.resize(from - first_index());
    ++writes_;
  }
  void save_snapshot(Snapshot snapshot) override {
    if (snapshot.last_index < snapshot_.last_index) throw std::logic_error("raft snapshot older than the current one");
    if (snapshot.last_index >= last_index()) {
      log_.clear();
    } else {
      log_.erase(log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(snapshot.last_index - snapshot_.last_index));
    }
    snapshot_ = std::move(snapshot);
    ++writes_;
  }

  std::size_t log_size() const { return log_.size(); }
  std::uint64_t writes() const { return writes_; }

 private:
  Term term_ = 0;
  std::optional<PeerId> vote_;
  Snapshot snapshot_;
  std::deque<LogEntry> log_;
  std::uint64_t writes_ = 0;
};

}  // namespace swarmlab::core::raft
