#include "core/tracker/bootstrap_messages.h"


#include <set>

#include "core/service_ids.h"

namespace swarmlab::core::tracker {
namespace {

std::string get_title(Reader& r, const BootstrapLimits& limits) {
  std::string t = r.str(limits.max_title_bytes);
  if (t.empty()) throw DecodeError("empty dataset title");
  return t;
}

}  // namespace

BootstrapKind reply_kind(BootstrapKind request) {
  switch (request) {
    case BootstrapKind::AssignId:
      return BootstrapKind::IdAssigned;
    case BootstrapKind::FindTracker:
      return BootstrapKind::TrackerFound;
    case BootstrapKind::ListDatasets:
      return BootstrapKind::Datasets;
    case BootstrapKind::FindPeers:
      return BootstrapKind::Peers;
    default:
      return BootstrapKind::Done;
  }
}

bool is_request(BootstrapKind kind) {
  return kind == BootstrapKind::AssignId || kind == BootstrapKind::RegisterDataset || kind == BootstrapKind::ReportLeader ||
         kind == BootstrapKind::FindTracker || kind == BootstrapKind::ListDatasets || kind == BootstrapKind::FindPeers;
}

std::vector<std::uint8_t> encode(const BootstrapMessage& m) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  w.u8(static_cast<std::uint8_t>(ServiceId::Bootstrap));
  w.u8(static_cast<std::uint8_t>(m.kind));
  w.varint(m.request_id);
  switch (m.kind) {
    case BootstrapKind::AssignId:
    case BootstrapKind::ListDatasets:
      break;
    case BootstrapKind::IdAssigned: {
      const dht::IdBytes bytes = m.id.to_bytes(dht::kHydraIdBits);
      w.raw(bytes.view());
      break;
    }
    case BootstrapKind::RegisterDataset:
    case BootstrapKind::FindTracker:
      w.str(m.title);
      break;
    case BootstrapKind::ReportLeader:
      w.str(m.title);
      w.varint(m.generation);
      w.varint(m.term);
      w.varint(m.leader.value_or(0));
      break;
    case BootstrapKind::Done:
      w.u8(m.accepted ? 1 : 0);
      break;
    case BootstrapKind::TrackerFound:
      w.u8(m.accepted ? 1 : 0);
      if (m.accepted) {
        w.varint(m.generation);
        w.u8(m.leader ? 1 : 0);
        if (m.leader) w.varint(*m.leader);
      }
      break;
    case BootstrapKind::Datasets:
      w.varint(m.titles.size());
      for (const std::string& t : m.titles) w.str(t);
      break;
    case BootstrapKind::FindPeers:
      w.varint(m.count);
      break;
    case BootstrapKind::Peers:
      w.varint(m.peers.size());
      for (PeerId p : m.peers) w.varint(p);
      break;
  }
  return out;
}

BootstrapMessage decode_bootstrap_message(std::span<const std::uint8_t> bytes, const BootstrapLimits& limits) {
  Reader r(bytes);
  if (r.u8() != static_cast<std::uint8_t>(ServiceId::Bootstrap)) throw DecodeError("not a bootstrap message");
  const std::uint8_t kind = r.u8();
  if (kind < 1 || kind > 11) throw DecodeError("unknown bootstrap message kind " + std::to_string(kind));
  BootstrapMessage m;
  m.kind = static_cast<BootstrapKind>(kind);
  m.request_id = r.varint();
  switch (m.kind) {
    case BootstrapKind::AssignId:
    case BootstrapKind::ListDatasets:
      break;
    case BootstrapKind::IdAssigned:
      m.id = dht::NodeId::from_bytes(r.raw(32));
      break;
    case BootstrapKind::RegisterDataset:
    case BootstrapKind::FindTracker:
      m.title = get_title(r, limits);
      break;
    case BootstrapKind::ReportLeader:
      m.title = get_title(r, limits);
      m.generation = r.varint();
      m.term = r.varint();
      m.leader = r.peer();
      break;
    case BootstrapKind::Done:
      m.accepted = r.boolean();
      break;
    case BootstrapKind::TrackerFound:
      m.accepted = r.boolean();
      if (m.accepted) {
        m.generation = r.varint();
        if (r.boolean()) m.leader = r.peer();
      }
      break;
    case BootstrapKind::Datasets: {
      const std::size_t n = r.count(2);
      if (n > limits.max_titles) throw DecodeError(std::to_string(n) + " titles exceed the limit");
      m.titles.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        m.titles.push_back(get_title(r, limits));
        if (i > 0 && !(m.titles[i - 1] < m.titles[i])) throw DecodeError("titles not strictly ascending");
      }
      break;
    }
    case BootstrapKind::FindPeers:
      m.count = r.varint();
      if (m.count == 0 || m.count > limits.max_peers) throw DecodeError("peer count out of range");
      break;
    case BootstrapKind::Peers: {
      const std::size_t n = r.count(1);
      if (n > limits.max_peers) throw DecodeError(std::to_string(n) + " peers exceed the limit");
      std::set<PeerId> seen;
      for (std::size_t i = 0; i < n; ++i) {
        m.peers.push_back(r.peer());
        if (!seen.insert(m.peers.back()).second) throw DecodeError("a peer listed twice");
      }
      break;
    }
  }
  r.finish();
  return m;
}

}  // namespace swarmlab::core::tracker
