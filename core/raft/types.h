#pragma once
// Raft's basic vocabulary: terms, log indexes, entries, configurations and snapshots
// (docs/hydra.md §2: a tracker group is replicated with Raft; core/raft/README.md describes the
// protocol as implemented).
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "core/env.h"

namespace swarmlab::core::raft {

using Term = std::uint64_t;
using Index = std::uint64_t;
using Bytes = std::vector<std::uint8_t>;

// Terms and indexes above this are rejected by the decoder, so that term + 1 and index + n can
// never overflow however hostile a message is.
inline constexpr std::uint64_t kMaxTermOrIndex = 1ull << 62;

enum class EntryType : std::uint8_t {
  Command = 1,  // applied to the replicated state machine
  Config = 2,   // a new membership (data = encoded Configuration); takes effect when appended
  Noop = 3,     // appended by every new leader, to commit entries of earlier terms
};

struct LogEntry {
  Term term = 0;
  EntryType type = EntryType::Command;
  Bytes data;
  friend bool operator==(const LogEntry&, const LogEntry&) = default;
};

// The voting members of a group: sorted, without duplicates.
struct Configuration {
  std::vector<PeerId> members;

  static Configuration of(std::vector<PeerId> peers) {
    std::sort(peers.begin(), peers.end());
    peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
    return {std::move(peers)};
  }
  bool contains(PeerId p) const { return std::binary_search(members.begin(), members.end(), p); }
  std::size_t size() const { return members.size(); }
  // Votes (or replicas) that make a majority.
  std::size_t quorum() const { return members.size() / 2 + 1; }
  Configuration with(PeerId p) const {
    auto m = members;
    m.push_back(p);
    return of(std::move(m));
  }
  Configuration without(PeerId p) const {
    auto m = members;
    m.erase(std::remove(m.begin(), m.end(), p), m.end());
    return {std::move(m)};
  }
  friend bool operator==(const Configuration&, const Configuration&) = default;
};

// The state machine's state after applying every entry up to last_index, with the membership in
// force at that index. An empty group starts from {0, 0, members, {}}.
struct Snapshot {
  Index last_index = 0;
  Term last_term = 0;
  Configuration config;
  Bytes data;
  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

}  // namespace swarmlab::core::raft
