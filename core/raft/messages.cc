#include "core/raft/messages.h"

#include <limits>
#include <string>

#include "core/service_ids.h"

namespace swarmlab::core::raft {
namespace {

constexpr std::uint8_t kFlagPreVote = 1;
// Smallest encodings, used to bound counts against the remaining input.
constexpr std::size_t kMinEntryBytes = 1 + 1 + 1;
constexpr std::size_t kMinPeerBytes = 1;

std::uint64_t get_bounded(Reader& r, const char* what) {
  const std::uint64_t v = r.varint();
  if (v > kMaxTermOrIndex) throw DecodeError(std::string(what) + " out of range");
  return v;
}

bool get_bool(Reader& r) {
  const std::uint8_t b = r.u8();
  if (b > 1) throw DecodeError("boolean byte " + std::to_string(b));
  return b == 1;
}

bool get_flags(Reader& r) {
  const std::uint8_t f = r.u8();
  if (f & ~kFlagPreVote) throw DecodeError("unknown flags");
  return f & kFlagPreVote;
}

PeerId get_peer(Reader& r) {
  const std::uint64_t p = r.varint();
  if (p > std::numeric_limits<PeerId>::max()) throw DecodeError("peer id out of range");
  return static_cast<PeerId>(p);
}

Bytes get_bytes(Reader& r, std::size_t max) {
  auto s = r.bytes(max);
  return Bytes(s.begin(), s.end());
}

void put_config(Writer& w, const Configuration& c) {
  w.varint(c.members.size());
  for (PeerId p : c.members) w.varint(p);
}

Configuration get_config(Reader& r, std::size_t max_members) {
  const std::size_t n = r.count(kMinPeerBytes);
  if (n == 0) throw DecodeError("empty configuration");
  if (n > max_members) throw DecodeError(std::to_string(n) + " members exceed the limit");
  Configuration c;
  c.members.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const PeerId p = get_peer(r);
    if (!c.members.empty() && p <= c.members.back()) throw DecodeError("configuration members not ascending");
    c.members.push_back(p);
  }
  return c;
}

std::size_t size_bound(const RaftMessage& m) {
  std::size_t n = 64 + m.data.size() + 10 * m.config.members.size();
  for (const LogEntry& e : m.entries) n += 21 + e.data.size();
  return n;
}

}  // namespace

Bytes encode_config(const Configuration& config) {
  Bytes out;
  Writer w(out);
  put_config(w, config);
  return out;
}

Configuration decode_config(std::span<const std::uint8_t> bytes, std::size_t max_members) {
  Reader r(bytes);
  Configuration c = get_config(r, max_members);
  r.finish();
  return c;
}

void encode(const RaftMessage& m, std::vector<std::uint8_t>& out) {
  out.reserve(out.size() + size_bound(m));
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(ServiceId::Raft));
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.varint(m.group);
  switch (m.kind) {
    case MessageKind::VoteRequest:
      w.u8(m.pre_vote ? kFlagPreVote : 0);
      w.varint(m.term);
      w.varint(m.last_index);
      w.varint(m.last_term);
      break;
    case MessageKind::VoteReply:
      w.u8(m.pre_vote ? kFlagPreVote : 0);
      w.varint(m.term);
      w.u8(m.granted ? 1 : 0);
      break;
    case MessageKind::AppendEntries:
      w.varint(m.term);
      w.varint(m.prev_index);
      w.varint(m.prev_term);
      w.varint(m.leader_commit);
      w.varint(m.entries.size());
      for (const LogEntry& e : m.entries) {
        w.varint(e.term);
        w.u8(static_cast<std::uint8_t>(e.type));
        w.bytes(e.data);
      }
      break;
    case MessageKind::AppendReply:
      w.varint(m.term);
      w.u8(m.success ? 1 : 0);
      w.varint(m.index);
      break;
    case MessageKind::InstallSnapshot:
      w.varint(m.term);
      w.varint(m.last_index);
      w.varint(m.last_term);
      put_config(w, m.config);
      w.bytes(m.data);
      break;
    case MessageKind::SnapshotReply:
      w.varint(m.term);
      w.varint(m.index);
      break;
    case MessageKind::ClientRequest:
      w.varint(m.request_id);
      w.bytes(m.data);
      break;
    case MessageKind::ClientReply:
      w.varint(m.request_id);
      w.u8(static_cast<std::uint8_t>(m.status));
      w.u8(m.leader ? 1 : 0);
      if (m.leader) w.varint(*m.leader);
      w.bytes(m.data);
      break;
  }
}

std::vector<std::uint8_t> encode(const RaftMessage& m) {
  std::vector<std::uint8_t> out;
  encode(m, out);
  return out;
}

RaftMessage decode(std::span<const std::uint8_t> bytes, const WireLimits& limits) {
  if (bytes.size() > limits.max_message_bytes)
    throw DecodeError("message of " + std::to_string(bytes.size()) + " bytes exceeds the limit");
  Reader r(bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::Raft)) throw DecodeError("not a Raft message");
  RaftMessage m;
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 8) throw DecodeError("unknown Raft message kind " + std::to_string(kind));
  m.kind = static_cast<MessageKind>(kind);
  m.group = r.varint();
  switch (m.kind) {
    case MessageKind::VoteRequest:
      m.pre_vote = get_flags(r);
      m.term = get_bounded(r, "term");
      m.last_index = get_bounded(r, "index");
      m.last_term = get_bounded(r, "term");
      if (m.last_term > m.term) throw DecodeError("last log term after the candidate's term");
      break;
    case MessageKind::VoteReply:
      m.pre_vote = get_flags(r);
      m.term = get_bounded(r, "term");
      m.granted = get_bool(r);
      break;
    case MessageKind::AppendEntries: {
      m.term = get_bounded(r, "term");
      m.prev_index = get_bounded(r, "index");
      m.prev_term = get_bounded(r, "term");
      m.leader_commit = get_bounded(r, "index");
      if (m.prev_term > m.term) throw DecodeError("previous entry's term after the leader's term");
      const std::size_t n = r.count(kMinEntryBytes);
      if (n > limits.max_entries) throw DecodeError(std::to_string(n) + " entries exceed the limit");
      m.entries.resize(n);
      Term previous = m.prev_term;
      for (LogEntry& e : m.entries) {
        e.term = get_bounded(r, "term");
        if (e.term < previous || e.term > m.term) throw DecodeError("entry terms out of order");
        previous = e.term;
        const std::uint8_t type = r.u8();
        if (type < 1 || type > 3) throw DecodeError("unknown entry type " + std::to_string(type));
        e.type = static_cast<EntryType>(type);
        e.data = get_bytes(r, limits.max_entry_bytes);
        if (e.type == EntryType::Config) decode_config(e.data, limits.max_members);
        if (e.type == EntryType::Noop && !e.data.empty()) throw DecodeError("no-op entry with data");
      }
      break;
    }
    case MessageKind::AppendReply:
      m.term = get_bounded(r, "term");
      m.success = get_bool(r);
      m.index = get_bounded(r, "index");
      break;
    case MessageKind::InstallSnapshot:
      m.term = get_bounded(r, "term");
      m.last_index = get_bounded(r, "index");
      m.last_term = get_bounded(r, "term");
      if (m.last_term > m.term) throw DecodeError("snapshot term after the leader's term");
      m.config = get_config(r, limits.max_members);
      m.data = get_bytes(r, limits.max_snapshot_bytes);
      break;
    case MessageKind::SnapshotReply:
      m.term = get_bounded(r, "term");
      m.index = get_bounded(r, "index");
      break;
    case MessageKind::ClientRequest:
      m.request_id = r.varint();
      m.data = get_bytes(r, limits.max_entry_bytes);
      break;
    case MessageKind::ClientReply: {
      m.request_id = r.varint();
      const std::uint8_t status = r.u8();
      if (status < 1 || status > 2) throw DecodeError("unknown client status " + std::to_string(status));
      m.status = static_cast<ClientStatus>(status);
      if (get_bool(r)) m.leader = get_peer(r);
      m.data = get_bytes(r, limits.max_entry_bytes);
      break;
    }
  }
  r.finish();
  return m;
}

}  // namespace swarmlab::core::raft
