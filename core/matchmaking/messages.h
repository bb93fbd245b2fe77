#pragma once
// Matchmaking's wire messages (docs/dedloc.md §3). Every message is
//
//   u8 service          core::ServiceId::Matchmaking
//   u8 kind             MessageKind
//   varint request_id   chosen by the follower for one join; echoed by every reply about it
//
// followed by a body that depends on the kind:
//
//   JoinRequest   u64 schema_hash, str group_key, f64 expiration, u8 client_mode, bytes gathered
//   JoinReply     u8 status; Accepted: f64 leader_expiration;
//                 NotALeader: u8 has_suggestion [varint suggested_leader]
//   Begin         u64 group_id, varint leader, varint n ≥ 1, n × (varint peer, u8 client_mode, bytes gathered)
//   Disband       u8 has_suggestion [varint suggested_leader]
//   Leave         (empty)
//
//   str / bytes = varint length, raw bytes
//
// decode() accepts exactly this: unknown kinds or statuses, booleans other than 0/1, non-finite
// expirations, peer ids beyond 32 bits, oversized fields, truncation and trailing bytes all
// throw DecodeError.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/matchmaking/group.h"

namespace swarmlab::core::matchmaking {

enum class MessageKind : std::uint8_t { JoinRequest = 1, JoinReply = 2, Begin = 3, Disband = 4, Leave = 5 };

// A leader's answer to a join request. Every rejection is its own reason (hivemind's MessageCode).
enum class JoinStatus : std::uint8_t {
  Accepted = 0,
  NotLookingForGroup = 1,  // not matchmaking now, or its group already began
  BadSchemaHash = 2,       // averages a differently shaped model
  BadGroupKey = 3,         // looks for a group under another key
  GroupFull = 4,           // already has target_group_size members
  NotALeader = 5,          // follows another leader (suggested) or is in client mode
  DuplicatePeerId = 6,     // the requester is already one of its followers
  DeclaredLater = 7,       // the leader's declaration comes after the requester's: it should lead
};
const char* to_string(JoinStatus status);

inline constexpr std::size_t kMaxGroupKeyBytes = 256;
inline constexpr std::size_t kMaxGatheredBytes = 4096;
inline constexpr std::size_t kMaxGroupMembers = 1024;

struct MatchmakingMessage {
  MessageKind kind = MessageKind::JoinRequest;
  std::uint64_t request_id = 0;
  // JoinRequest
  std::uint64_t schema_hash = 0;
  std::string group_key;
  Seconds expiration = 0;  // the follower's declared expiration (0 for a client, which declares none)
  bool client_mode = false;
  Attachment gathered;
  // JoinReply
  JoinStatus status = JoinStatus::Accepted;
  Seconds leader_expiration = 0;           // Accepted: the leader begins by then
  std::optional<PeerId> suggested_leader;  // NotALeader and Disband
  // Begin
  std::uint64_t group_id = 0;
  PeerId leader = 0;
  std::vector<GroupMember> members;
  friend bool operator==(const MatchmakingMessage&, const MatchmakingMessage&) = default;
};

// A message of `kind` about join `request_id`, every other field at its default.
inline MatchmakingMessage make_message(MessageKind kind, std::uint64_t request_id) {
  MatchmakingMessage m;
  m.kind = kind;
  m.request_id = request_id;
  return m;
}

std::vector<std::uint8_t> encode(const MatchmakingMessage& m);
MatchmakingMessage decode(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::matchmaking
