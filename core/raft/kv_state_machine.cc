#include "core/raft/kv_state_machine.h"

#include "core/wire.h"

namespace swarmlab::core::raft {
namespace {

constexpr std::size_t kMaxKeyBytes = 4096;
constexpr std::size_t kMaxValueBytes = 1u << 20;
constexpr std::size_t kMaxResultBytes = kMaxValueBytes + 16;
constexpr std::uint8_t kSnapshotVersion = 1;

}  // namespace

Bytes encode_kv_command(const KvCommand& c) {
  Bytes out;
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(c.op));
  w.varint(c.client);
  w.varint(c.seq);
  w.str(c.key);
  if (c.op == KvOp::Cas) w.str(c.expected);
  if (c.op != KvOp::Get) w.str(c.value);
  return out;
}

KvCommand decode_kv_command(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  KvCommand c;
  const std::uint8_t op = r.u8();
  if (op < 1 || op > 3) throw DecodeError("unknown key-value op");
  c.op = static_cast<KvOp>(op);
  c.client = r.varint();
  c.seq = r.varint();
  c.key = r.str(kMaxKeyBytes);
  if (c.op == KvOp::Cas) c.expected = r.str(kMaxValueBytes);
  if (c.op != KvOp::Get) c.value = r.str(kMaxValueBytes);
  r.finish();
  return c;
}

Bytes encode_kv_result(const KvResult& res) {
  Bytes out;
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(res.status));
  if (res.status == KvStatus::Ok) {
    w.u8(res.value ? 1 : 0);
    if (res.value) w.str(*res.value);
  }
  return out;
}

KvResult decode_kv_result(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  KvResult res;
  const std::uint8_t status = r.u8();
  if (status < 1 || status > 4) throw DecodeError("unknown key-value status");
  res.status = static_cast<KvStatus>(status);
  if (res.status == KvStatus::Ok) {
    const std::uint8_t found = r.u8();
    if (found > 1) throw DecodeError("boolean byte");
    if (found) res.value = r.str(kMaxValueBytes);
  }
  r.finish();
  return res;
}

Bytes KvStateMachine::apply(std::span<const std::uint8_t> command) {
  KvCommand c;
  try {
    c = decode_kv_command(command);
  } catch (const DecodeError&) {
    return encode_kv_result({KvStatus::Malformed, std::nullopt});
  }
  Session& session = sessions_[c.client];
  if (c.seq != 0 && c.seq < session.last_seq) return encode_kv_result({KvStatus::Stale, std::nullopt});
  if (c.seq != 0 && c.seq == session.last_seq) return session.last_result;

  KvResult res;
  switch (c.op) {
    case KvOp::Put:
      data_[c.key] = c.value;
      break;
    case KvOp::Get: {
      auto it = data_.find(c.key);
      if (it != data_.end()) res.value = it->second;
      break;
    }
    case KvOp::Cas: {
      auto it = data_.find(c.key);
      if (it != data_.end() && it->second == c.expected) {
        it->second = c.value;
      } else {
        res.status = KvStatus::CasFailed;
      }
      break;
    }
  }
  ++applied_;
  Bytes out = encode_kv_result(res);
  if (c.seq != 0) {
    session.last_seq = c.seq;
    session.last_result = out;
  }
  return out;
}

// Snapshot = u8 version, varint applied, varint n, n × (str key, str value) ascending,
//            varint m, m × (varint client, varint last_seq, bytes last_result) ascending.
Bytes KvStateMachine::snapshot() const {
  std::size_t size = 32;
  for (const auto& [k, v] : data_) size += k.size() + v.size() + 10;
  for (const auto& [client, s] : sessions_) size += s.last_result.size() + 25;
  Bytes out;
  out.reserve(size);
  Writer w(out);
  w.u8(kSnapshotVersion);
  w.varint(applied_);
  w.varint(data_.size());
  for (const auto& [k, v] : data_) {
    w.str(k);
    w.str(v);
  }
  w.varint(sessions_.size());
  for (const auto& [client, s] : sessions_) {
    w.varint(client);
    w.varint(s.last_seq);
    w.bytes(s.last_result);
  }
  return out;
}

void KvStateMachine::restore(std::span<const std::uint8_t> snapshot) {
  Reader r(snapshot);
  if (r.u8() != kSnapshotVersion) throw DecodeError("unknown key-value snapshot version");
  const std::uint64_t applied = r.varint();
  std::map<std::string, std::string> data;
  const std::size_t n = r.count(2);
  for (std::size_t i = 0; i < n; ++i) {
    std::string k = r.str(kMaxKeyBytes);
    std::string v = r.str(kMaxValueBytes);
    if (!data.empty() && !(data.rbegin()->first < k)) throw DecodeError("snapshot keys not ascending");
    data.emplace_hint(data.end(), std::move(k), std::move(v));
  }
  std::map<std::uint64_t, Session> sessions;
  const std::size_t m = r.count(3);
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint64_t client = r.varint();
    Session s;
    s.last_seq = r.varint();
    auto res = r.bytes(kMaxResultBytes);
    s.last_result.assign(res.begin(), res.end());
    if (!sessions.empty() && sessions.rbegin()->first >= client) throw DecodeError("snapshot sessions not ascending");
    sessions.emplace_hint(sessions.end(), client, std::move(s));
  }
  r.finish();
  data_ = std::move(data);
  sessions_ = std::move(sessions);
  applied_ = applied;
}

}  // namespace swarmlab::core::raft
