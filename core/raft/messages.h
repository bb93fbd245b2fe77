#pragma once
// Raft's wire messages (docs/hydra.md §2). Every message is
//
//   u8     service       core::ServiceId::Raft
//   u8     kind          MessageKind
//   varint group         which Raft group (a peer may serve several)
//
// followed by a body that depends on the kind:
//
//   VoteRequest       u8 flags (bit 0: pre-vote), varint term, varint last_index, varint last_term
//   VoteReply         u8 flags (bit 0: pre-vote), varint term, u8 granted
//   AppendEntries     varint term, varint prev_index, varint prev_term, varint leader_commit,
//                     varint n, n × entry
//   AppendReply       varint term, u8 success, varint index   (success: the follower's log matches
//                     the leader's up to index; failure: the leader should retry from index)
//   InstallSnapshot   varint term, varint last_index, varint last_term, config, bytes data
//   SnapshotReply     varint term, varint index   (the follower's log matches up to index)
//   ClientRequest     varint request_id, bytes command
//   ClientReply       varint request_id, u8 status, u8 has_leader, [varint leader], bytes result
//
//   entry  = varint term, u8 type (EntryType), bytes data   (a Config entry's data is a config)
//   config = varint n ≥ 1, n × varint peer, strictly ascending
//   bytes  = varint length, raw bytes
//
// decode() accepts exactly this and nothing else: unknown kinds, flags, entry types or statuses,
// booleans other than 0/1, terms or indexes above kMaxTermOrIndex, entries whose terms decrease,
// precede prev_term or exceed the message's term, malformed or unsorted configs, oversized fields,
// truncation and trailing bytes all throw DecodeError.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/raft/types.h"
#include "core/wire.h"

namespace swarmlab::core::raft {

enum class MessageKind : std::uint8_t {
  VoteRequest = 1,
  VoteReply = 2,
  AppendEntries = 3,
  AppendReply = 4,
  InstallSnapshot = 5,
  SnapshotReply = 6,
  ClientRequest = 7,
  ClientReply = 8,
};

enum class ClientStatus : std::uint8_t {
  Ok = 1,         // committed and applied; result holds the state machine's answer
  NotLeader = 2,  // ask the leader (hint, when known) instead
};

// What a receiver accepts.
struct WireLimits {
  std::size_t max_message_bytes = 8u << 20;
  std::size_t max_entries = 4096;
  std::size_t max_entry_bytes = 1u << 20;
  std::size_t max_snapshot_bytes = 8u << 20;
  std::size_t max_members = 256;
};

// One decoded message. Fields a kind does not use keep their defaults (and encode() ignores them).
struct RaftMessage {
  MessageKind kind = MessageKind::VoteRequest;
  std::uint64_t group = 0;
  Term term = 0;
  bool pre_vote = false;           // VoteRequest, VoteReply
  Index last_index = 0;            // VoteRequest, InstallSnapshot
  Term last_term = 0;              // VoteRequest, InstallSnapshot
  bool granted = false;            // VoteReply
  Index prev_index = 0;            // AppendEntries
  Term prev_term = 0;              // AppendEntries
  Index leader_commit = 0;         // AppendEntries
  std::vector<LogEntry> entries;   // AppendEntries
  bool success = false;            // AppendReply
  Index index = 0;                 // AppendReply, SnapshotReply
  Configuration config;            // InstallSnapshot
  Bytes data;                      // InstallSnapshot (state), ClientRequest (command), ClientReply (result)
  std::uint64_t request_id = 0;    // ClientRequest, ClientReply
  ClientStatus status = ClientStatus::Ok;   // ClientReply
  std::optional<PeerId> leader;    // ClientReply
  friend bool operator==(const RaftMessage&, const RaftMessage&) = default;
};

// Appends the encoding of `m` to `out`.
void encode(const RaftMessage& m, std::vector<std::uint8_t>& out);
std::vector<std::uint8_t> encode(const RaftMessage& m);
// Throws DecodeError on anything but a well-formed Raft message within `limits`.
RaftMessage decode(std::span<const std::uint8_t> bytes, const WireLimits& limits);

// A configuration as carried in a Config entry's data.
Bytes encode_config(const Configuration& config);
Configuration decode_config(std::span<const std::uint8_t> bytes, std::size_t max_members);

}  // namespace swarmlab::core::raft
