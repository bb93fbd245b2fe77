#include "core/matchmaking/messages.h"

#include <cmath>
#include <limits>

#include "core/service_ids.h"
#include "core/wire.h"

namespace swarmlab::core::matchmaking {
namespace {

PeerId read_peer(Reader& r) {
  const std::uint64_t v = r.varint();
  if (v > std::numeric_limits<PeerId>::max()) throw DecodeError("matchmaking: peer id beyond 32 bits");
  return static_cast<PeerId>(v);
}

bool read_bool(Reader& r) {
  const std::uint8_t v = r.u8();
  if (v > 1) throw DecodeError("matchmaking: boolean not 0/1");
  return v == 1;
}

Seconds read_time(Reader& r) {
  const double v = r.f64();
  if (!std::isfinite(v)) throw DecodeError("matchmaking: non-finite time");
  return v;
}

void write_suggestion(Writer& w, const std::optional<PeerId>& s) {
  w.u8(s ? 1 : 0);
  if (s) w.varint(*s);
}

std::optional<PeerId> read_suggestion(Reader& r) {
  if (!read_bool(r)) return std::nullopt;
  return read_peer(r);
}

}  // namespace

const char* to_string(JoinStatus status) {
  switch (status) {
    case JoinStatus::Accepted: return "accepted";
    case JoinStatus::NotLookingForGroup: return "not looking for a group";
    case JoinStatus::BadSchemaHash: return "bad schema hash";
    case JoinStatus::BadGroupKey: return "bad group key";
    case JoinStatus::GroupFull: return "group is full";
    case JoinStatus::NotALeader: return "not a leader";
    case JoinStatus::DuplicatePeerId: return "duplicate peer id";
    case JoinStatus::DeclaredLater: return "declared later than the requester";
  }
  return "?";
}

std::vector<std::uint8_t> encode(const MatchmakingMessage& m) {
  std::vector<std::uint8_t> out;
  out.reserve(64);  // also keeps GCC 12 from a false -Warray-bounds on the first insert
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(ServiceId::Matchmaking));
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.varint(m.request_id);
  switch (m.kind) {
    case MessageKind::JoinRequest:
      w.u64(m.schema_hash);
      w.str(m.group_key);
      w.f64(m.expiration);
      w.u8(m.client_mode ? 1 : 0);
      w.bytes(m.gathered);
      break;
    case MessageKind::JoinReply:
      w.u8(static_cast<std::uint8_t>(m.status));
      if (m.status == JoinStatus::Accepted) w.f64(m.leader_expiration);
      if (m.status == JoinStatus::NotALeader) write_suggestion(w, m.suggested_leader);
      break;
    case MessageKind::Begin:
      w.u64(m.group_id);
      w.varint(m.leader);
      w.varint(m.members.size());
      for (const GroupMember& g : m.members) {
        w.varint(g.peer);
        w.u8(g.client_mode ? 1 : 0);
        w.bytes(g.gathered);
      }
      break;
    case MessageKind::Disband:
      write_suggestion(w, m.suggested_leader);
      break;
    case MessageKind::Leave:
      break;
  }
  return out;
}

MatchmakingMessage decode(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::Matchmaking)) throw DecodeError("matchmaking: wrong service");
  MatchmakingMessage m;
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 5) throw DecodeError("matchmaking: unknown kind");
  m.kind = static_cast<MessageKind>(kind);
  m.request_id = r.varint();
  switch (m.kind) {
    case MessageKind::JoinRequest: {
      m.schema_hash = r.u64();
      m.group_key = r.str(kMaxGroupKeyBytes);
      m.expiration = read_time(r);
      m.client_mode = read_bool(r);
      const auto g = r.bytes(kMaxGatheredBytes);
      m.gathered = Attachment(g);
      break;
    }
    case MessageKind::JoinReply: {
      const std::uint8_t status = r.u8();
      if (status > static_cast<std::uint8_t>(JoinStatus::DeclaredLater)) throw DecodeError("matchmaking: unknown status");
      m.status = static_cast<JoinStatus>(status);
      if (m.status == JoinStatus::Accepted) m.leader_expiration = read_time(r);
      if (m.status == JoinStatus::NotALeader) m.suggested_leader = read_suggestion(r);
      break;
    }
    case MessageKind::Begin: {
      m.group_id = r.u64();
      m.leader = read_peer(r);
      const std::size_t n = r.count(3);  // each member takes at least 3 bytes
      if (n == 0 || n > kMaxGroupMembers) throw DecodeError("matchmaking: bad member count");
      m.members.resize(n);
      for (GroupMember& g : m.members) {
        g.peer = read_peer(r);
        g.client_mode = read_bool(r);
        const auto b = r.bytes(kMaxGatheredBytes);
        g.gathered = Attachment(b);
      }
      break;
    }
    case MessageKind::Disband:
      m.suggested_leader = read_suggestion(r);
      break;
    case MessageKind::Leave:
      break;
  }
  r.finish();
  return m;
}

}  // namespace swarmlab::core::matchmaking
