#include "core/tracker/state_machine.h"

namespace swarmlab::core::tracker {
namespace {

constexpr std::uint8_t kSnapshotVersion = 2;  // 2: sessions name their origin

TrackerResult status(TrackerStatus s) { return {s, std::nullopt, {}}; }

}  // namespace

std::uint64_t TrackerStateMachine::last_seq(PeerId origin, std::uint64_t client) const {
  auto it = sessions_.find({origin, client});
  return it == sessions_.end() ? 0 : it->second.last_seq;
}

TrackerStateMachine::Session* TrackerStateMachine::session_for(const SessionKey& key) {
  auto it = sessions_.find(key);
  if (it != sessions_.end()) return &it->second;
  if (limits_.max_sessions == 0) return nullptr;
  if (sessions_.size() >= limits_.max_sessions) {
    // Evict the session idle longest (lowest last_used; ties by client id): deterministic, so every
    // replica evicts the same one.
    auto oldest = sessions_.begin();
    for (auto s = sessions_.begin(); s != sessions_.end(); ++s)
      if (s->second.last_used < oldest->second.last_used) oldest = s;
    sessions_.erase(oldest);
  }
  return &sessions_[key];
}

bool TrackerStateMachine::authorized(const TrackerCommand& c, PeerId origin) const {
  // Before the dataset exists there is nothing to protect: the command gets NoDataset.
  if (!info_.created && c.op != TrackerOp::CreateDataset) return true;
  const bool creator = origin == info_.creator;
  switch (c.op) {
    case TrackerOp::CreateDataset:
      return c.peer == origin;
    case TrackerOp::AddFile:
      return creator;
    case TrackerOp::RecordContribution:
    case TrackerOp::RemovePeer:
      return c.peer == origin || creator;
    case TrackerOp::DownloadStarted:
    case TrackerOp::DownloadCompleted:
      return c.peer == origin;
    case TrackerOp::Query:
    case TrackerOp::Export:
      return true;
  }
  return false;
}

Bytes TrackerStateMachine::apply(std::span<const std::uint8_t> entry) {
  TrackerEntry e;
  try {
    e = decode_tracker_entry(entry, limits_);
  } catch (const DecodeError&) {
    return encode_tracker_result(status(TrackerStatus::Malformed));
  }
  const TrackerCommand& c = e.command;
  // Refused before its session is touched: nobody else's retries or seqs are disturbed.
  if (!authorized(c, e.origin)) return encode_tracker_result(status(TrackerStatus::Unauthorized));
  Session* session = nullptr;
  if (c.seq != 0) {
    const SessionKey key{e.origin, c.client};
    auto it = sessions_.find(key);
    if (it != sessions_.end()) {
      if (c.seq < it->second.last_seq) return encode_tracker_result(status(TrackerStatus::Stale));
      if (c.seq == it->second.last_seq && is_update(c.op))
        return encode_tracker_result(status(it->second.last_status));
    }
    session = session_for(key);
  }
  ++applied_;
  if (session) {  // before executing: an Export's snapshot includes its own session
    session->last_seq = c.seq;
    session->last_used = applied_;
  }
  TrackerResult res = execute(c);
  if (session && is_update(c.op)) session->last_status = res.status;
  return encode_tracker_result(res);
}

TrackerResult TrackerStateMachine::execute(const TrackerCommand& c) {
  if (c.op == TrackerOp::Query) return {TrackerStatus::Ok, info_, {}};
  if (c.op == TrackerOp::Export) return {TrackerStatus::Ok, std::nullopt, snapshot()};
  if (c.op == TrackerOp::CreateDataset) {
    if (info_.created) return status(TrackerStatus::AlreadyExists);
    info_.created = true;
    info_.title = c.text;
    info_.creator = c.peer;
    return status(TrackerStatus::Ok);
  }
  if (!info_.created) return status(TrackerStatus::NoDataset);
  const std::size_t records = record_count(info_);
  switch (c.op) {
    case TrackerOp::AddFile:
      if (info_.files.count(c.text)) return status(TrackerStatus::AlreadyExists);
      if (info_.files.size() >= limits_.max_files) return status(TrackerStatus::Full);
      info_.files.emplace(c.text, c.size);
      return status(TrackerStatus::Ok);
    case TrackerOp::RecordContribution: {
      if (!info_.files.count(c.text)) return status(TrackerStatus::NoSuchFile);
      auto it = info_.contributors.find(c.peer);
      if (it != info_.contributors.end() && it->second.count(c.text)) return status(TrackerStatus::Ok);
      if (records >= limits_.max_records) return status(TrackerStatus::Full);
      if (it == info_.contributors.end() && info_.contributors.size() >= limits_.max_peers)
        return status(TrackerStatus::Full);
      info_.contributors[c.peer].insert(c.text);
      return status(TrackerStatus::Ok);
    }
    case TrackerOp::DownloadStarted:
      // A seeder already has everything; starting again changes nothing.
      if (info_.seeders.count(c.peer) || info_.downloaders.count(c.peer)) return status(TrackerStatus::Ok);
      if (info_.downloaders.size() >= limits_.max_peers) return status(TrackerStatus::Full);
      info_.downloaders[c.peer];
      return status(TrackerStatus::Ok);
    case TrackerOp::DownloadCompleted: {
      if (!info_.files.count(c.text)) return status(TrackerStatus::NoSuchFile);
      if (info_.seeders.count(c.peer)) return status(TrackerStatus::Ok);
      // Completing a file implies the download started. Every limit is checked before anything
      // changes, so a Full command leaves the state as it was.
      auto it = info_.downloaders.find(c.peer);
      const bool new_peer = it == info_.downloaders.end();
      if (new_peer && info_.downloaders.size() >= limits_.max_peers) return status(TrackerStatus::Full);
      const std::size_t had = new_peer ? 0 : it->second.size();
      const bool new_file = new_peer || !it->second.count(c.text);
      if (had + (new_file ? 1 : 0) == info_.files.size()) {
        // Every file listed now: the downloader becomes a seeder (its per-file records go).
        if (info_.seeders.size() >= limits_.max_peers) return status(TrackerStatus::Full);
        if (!new_peer) info_.downloaders.erase(it);
        info_.seeders.insert(c.peer);
        return status(TrackerStatus::Ok);
      }
      if (new_file && records >= limits_.max_records) return status(TrackerStatus::Full);
      info_.downloaders[c.peer].insert(c.text);
      return status(TrackerStatus::Ok);
    }
    case TrackerOp::RemovePeer:
      // A peer gone stops being a source; what it contributed stays on record (credit).
      info_.downloaders.erase(c.peer);
      info_.seeders.erase(c.peer);
      return status(TrackerStatus::Ok);
    case TrackerOp::CreateDataset:
    case TrackerOp::Query:
    case TrackerOp::Export:
      break;
  }
  return status(TrackerStatus::Malformed);  // unreachable: every op is handled above
}

// Snapshot = u8 version, varint applied, DatasetInfo,
//            varint n, n × (varint origin, varint client, varint last_seq, u8 last_status, varint last_used)
//            ascending by (origin, client).
Bytes TrackerStateMachine::snapshot() const {
  std::size_t size = 64 + info_.title.size() + sessions_.size() * 24;
  for (const auto& [name, s] : info_.files) size += name.size() + 10;
  size += (record_count(info_) + info_.contributors.size() + info_.downloaders.size()) * (limits_.max_file_name_bytes + 10);
  Bytes out;
  out.reserve(size);
  Writer w(out);
  w.u8(kSnapshotVersion);
  w.varint(applied_);
  write_dataset_info(w, info_);
  w.varint(sessions_.size());
  for (const auto& [key, s] : sessions_) {
    w.varint(key.first);
    w.varint(key.second);
    w.varint(s.last_seq);
    w.u8(static_cast<std::uint8_t>(s.last_status));
    w.varint(s.last_used);
  }
  return out;
}

void TrackerStateMachine::restore(std::span<const std::uint8_t> snapshot) {
  Reader r(snapshot);
  if (r.u8() != kSnapshotVersion) throw DecodeError("unknown tracker snapshot version");
  const std::uint64_t applied = r.varint();
  DatasetInfo info = read_dataset_info(r, limits_);
  std::map<SessionKey, Session> sessions;
  const std::size_t n = r.count(5);
  if (n > limits_.max_sessions) throw DecodeError("too many sessions");
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t origin = r.varint();
    if (origin > 0xFFFFFFFFu) throw DecodeError("origin out of range");
    const SessionKey key{static_cast<PeerId>(origin), r.varint()};
    Session s;
    s.last_seq = r.varint();
    const std::uint8_t st = r.u8();
    if (st < 1 || st > 8) throw DecodeError("unknown tracker status");
    s.last_status = static_cast<TrackerStatus>(st);
    s.last_used = r.varint();
    if (s.last_seq == 0 || s.last_used > applied) throw DecodeError("impossible session");
    if (!sessions.empty() && sessions.rbegin()->first >= key) throw DecodeError("sessions not ascending");
    sessions.emplace_hint(sessions.end(), key, s);
  }
  r.finish();
  info_ = std::move(info);
  sessions_ = std::move(sessions);
  applied_ = applied;
}

}  // namespace swarmlab::core::tracker
