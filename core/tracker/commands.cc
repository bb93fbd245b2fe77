#include "core/tracker/commands.h"

#include <limits>

namespace swarmlab::core::tracker {
namespace {

PeerId read_peer(Reader& r) {
  const std::uint64_t p = r.varint();
  if (p > std::numeric_limits<PeerId>::max()) throw DecodeError("peer id exceeds 32 bits");
  return static_cast<PeerId>(p);
}

// A name that must not be empty (titles and file names identify things).
std::string read_name(Reader& r, std::size_t max) {
  std::string s = r.str(max);
  if (s.empty()) throw DecodeError("empty name");
  return s;
}

void write_peer_files(Writer& w, const std::map<PeerId, std::set<std::string>>& m) {
  w.varint(m.size());
  for (const auto& [peer, files] : m) {
    w.varint(peer);
    w.varint(files.size());
    for (const std::string& f : files) w.str(f);
  }
}

// Peers ascending, each with a non-empty ascending set of files the dataset lists.
std::map<PeerId, std::set<std::string>> read_peer_files(Reader& r, const TrackerLimits& limits,
                                                         const std::map<std::string, std::uint64_t>& files,
                                                         bool allow_empty, std::size_t& records) {
  std::map<PeerId, std::set<std::string>> out;
  const std::size_t n = r.count(2);
  if (n > limits.max_peers) throw DecodeError("too many peers");
  for (std::size_t i = 0; i < n; ++i) {
    const PeerId peer = read_peer(r);
    if (!out.empty() && out.rbegin()->first >= peer) throw DecodeError("peers not ascending");
    const std::size_t m = r.count(2);
    if (m == 0 && !allow_empty) throw DecodeError("peer without files");
    if (m > limits.max_records - records) throw DecodeError("too many peer-file records");
    records += m;
    std::set<std::string> names;
    for (std::size_t j = 0; j < m; ++j) {
      std::string f = read_name(r, limits.max_file_name_bytes);
      if (!files.count(f)) throw DecodeError("a file the dataset does not list");
      if (!names.empty() && !(*names.rbegin() < f)) throw DecodeError("files not ascending");
      names.emplace_hint(names.end(), std::move(f));
    }
    out.emplace_hint(out.end(), peer, std::move(names));
  }
  return out;
}

}  // namespace

const char* to_string(TrackerStatus status) {
  switch (status) {
    case TrackerStatus::Ok:
      return "ok";
    case TrackerStatus::Stale:
      return "stale";
    case TrackerStatus::Malformed:
      return "malformed";
    case TrackerStatus::NoDataset:
      return "no dataset";
    case TrackerStatus::AlreadyExists:
      return "already exists";
    case TrackerStatus::NoSuchFile:
      return "no such file";
    case TrackerStatus::Full:
      return "full";
    case TrackerStatus::Unauthorized:
      return "unauthorized";
  }
  return "?";
}

bool is_update(TrackerOp op) { return op != TrackerOp::Query && op != TrackerOp::Export; }

std::size_t record_count(const DatasetInfo& info) {
  std::size_t n = 0;
  for (const auto& [peer, files] : info.contributors) n += files.size();
  for (const auto& [peer, files] : info.downloaders) n += files.size();
  return n;
}

Bytes encode_tracker_command(const TrackerCommand& c) {
  Bytes out;
  out.reserve(24 + c.text.size());
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(c.op));
  w.varint(c.client);
  w.varint(c.seq);
  switch (c.op) {
    case TrackerOp::CreateDataset:
      w.str(c.text);
      w.varint(c.peer);
      break;
    case TrackerOp::AddFile:
      w.str(c.text);
      w.varint(c.size);
      break;
    case TrackerOp::RecordContribution:
    case TrackerOp::DownloadCompleted:
      w.varint(c.peer);
      w.str(c.text);
      break;
    case TrackerOp::DownloadStarted:
    case TrackerOp::RemovePeer:
      w.varint(c.peer);
      break;
    case TrackerOp::Query:
    case TrackerOp::Export:
      break;
  }
  return out;
}

Bytes stamp_tracker_command(PeerId origin, std::span<const std::uint8_t> command) {
  Bytes out;
  out.reserve(command.size() + 5);
  Writer w(out);
  w.varint(origin);
  out.insert(out.end(), command.begin(), command.end());
  return out;
}

TrackerEntry decode_tracker_entry(std::span<const std::uint8_t> bytes, const TrackerLimits& limits) {
  Reader r(bytes);
  const std::uint64_t origin = r.varint();
  if (origin > 0xFFFFFFFFu) throw DecodeError("origin out of range");
  const std::size_t header = bytes.size() - r.remaining();
  return {static_cast<PeerId>(origin), decode_tracker_command(bytes.subspan(header), limits)};
}

TrackerCommand decode_tracker_command(std::span<const std::uint8_t> bytes, const TrackerLimits& limits) {
  Reader r(bytes);
  TrackerCommand c;
  const std::uint8_t op = r.u8();
  if (op < 1 || op > 8) throw DecodeError("unknown tracker op");
  c.op = static_cast<TrackerOp>(op);
  c.client = r.varint();
  c.seq = r.varint();
  switch (c.op) {
    case TrackerOp::CreateDataset:
      c.text = read_name(r, limits.max_title_bytes);
      c.peer = read_peer(r);
      break;
    case TrackerOp::AddFile:
      c.text = read_name(r, limits.max_file_name_bytes);
      c.size = r.varint();
      if (c.size > limits.max_file_size) throw DecodeError("file size over the limit");
      break;
    case TrackerOp::RecordContribution:
    case TrackerOp::DownloadCompleted:
      c.peer = read_peer(r);
      c.text = read_name(r, limits.max_file_name_bytes);
      break;
    case TrackerOp::DownloadStarted:
    case TrackerOp::RemovePeer:
      c.peer = read_peer(r);
      break;
    case TrackerOp::Query:
    case TrackerOp::Export:
      break;
  }
  r.finish();
  return c;
}

void write_dataset_info(Writer& w, const DatasetInfo& info) {
  w.u8(info.created ? 1 : 0);
  w.str(info.title);
  w.varint(info.creator);
  w.varint(info.files.size());
  for (const auto& [name, size] : info.files) {
    w.str(name);
    w.varint(size);
  }
  write_peer_files(w, info.contributors);
  write_peer_files(w, info.downloaders);
  w.varint(info.seeders.size());
  for (PeerId p : info.seeders) w.varint(p);
}

DatasetInfo read_dataset_info(Reader& r, const TrackerLimits& limits) {
  DatasetInfo info;
  const std::uint8_t created = r.u8();
  if (created > 1) throw DecodeError("boolean byte");
  info.created = created == 1;
  info.title = r.str(limits.max_title_bytes);
  info.creator = read_peer(r);
  // A dataset not yet created is empty (nothing can be recorded before the create).
  if (info.created == info.title.empty()) throw DecodeError("title and creation disagree");
  const std::size_t n = r.count(2);
  if (n > limits.max_files) throw DecodeError("too many files");
  for (std::size_t i = 0; i < n; ++i) {
    std::string name = read_name(r, limits.max_file_name_bytes);
    const std::uint64_t size = r.varint();
    if (size > limits.max_file_size) throw DecodeError("file size over the limit");
    if (!info.files.empty() && !(info.files.rbegin()->first < name)) throw DecodeError("files not ascending");
    info.files.emplace_hint(info.files.end(), std::move(name), size);
  }
  std::size_t records = 0;
  info.contributors = read_peer_files(r, limits, info.files, false, records);
  info.downloaders = read_peer_files(r, limits, info.files, true, records);
  const std::size_t s = r.count(1);
  if (s > limits.max_peers) throw DecodeError("too many seeders");
  for (std::size_t i = 0; i < s; ++i) {
    const PeerId p = read_peer(r);
    if (!info.seeders.empty() && *info.seeders.rbegin() >= p) throw DecodeError("seeders not ascending");
    if (info.downloaders.count(p)) throw DecodeError("a peer both downloader and seeder");
    info.seeders.insert(info.seeders.end(), p);
  }
  if (!info.created && (info.creator != 0 || !info.files.empty() || !info.contributors.empty() ||
                        !info.downloaders.empty() || !info.seeders.empty()))
    throw DecodeError("metadata of a dataset not created");
  return info;
}

Bytes encode_tracker_result(const TrackerResult& res) {
  Bytes out;
  out.reserve(res.state.size() + 64);
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(res.status));
  if (res.status == TrackerStatus::Ok) {
    if (res.info) write_dataset_info(w, *res.info);
    else if (!res.state.empty()) w.bytes(res.state);
  }
  return out;
}

TrackerResult decode_tracker_result(std::span<const std::uint8_t> bytes, TrackerOp op, const TrackerLimits& limits) {
  Reader r(bytes);
  TrackerResult res;
  const std::uint8_t status = r.u8();
  if (status < 1 || status > 8) throw DecodeError("unknown tracker status");
  res.status = static_cast<TrackerStatus>(status);
  if (res.status == TrackerStatus::Ok) {
    if (op == TrackerOp::Query) res.info = read_dataset_info(r, limits);
    if (op == TrackerOp::Export) {
      auto s = r.bytes(1u << 20);
      if (s.empty()) throw DecodeError("empty export");  // a snapshot always has its version byte
      res.state.assign(s.begin(), s.end());
    }
  }
  r.finish();
  return res;
}

}  // namespace swarmlab::core::tracker
