#pragma once
// The messages between peers and a bootstrap server (docs/hydra.md §2, bootstrap_server.h): a
// request and its reply carry the same request id.
//
// Message = u8 service (ServiceId::Bootstrap), u8 kind, varint request_id, then by kind:
//   1 AssignId          (nothing)                      reply 2 IdAssigned: 32-byte id (256 bits)
//   3 RegisterDataset   str title                      reply 5 Done: u8 accepted
//   4 ReportLeader      str title, varint generation, varint term,    reply 5 Done
//                       varint leader
//   6 FindTracker       str title                      reply 7 TrackerFound: u8 listed, and when
//                                                      listed varint generation, u8 has_leader,
//                                                      [varint leader]
//   8 ListDatasets      (nothing)                      reply 9 Datasets: varint n, n × str title,
//                                                      strictly ascending
//   10 FindPeers        varint n                       reply 11 Peers: varint count, count ×
//                                                      varint peer, distinct, count <= n
//
// decode_bootstrap_message() accepts exactly this within BootstrapLimits: unknown kinds, booleans
// other than 0/1, peers above 2^32 - 1, empty or oversized titles, unsorted titles, more peers than
// max_peers or repeated ones, truncation and trailing bytes all throw DecodeError.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/dht/node_id.h"
#include "core/types.h"
#include "core/wire.h"

namespace swarmlab::core::tracker {

struct BootstrapLimits {
  std::size_t max_title_bytes = 256;  // TrackerLimits::max_title_bytes
  std::size_t max_titles = 100'000;   // BootstrapDirectory's default catalogue size
  std::size_t max_peers = 256;        // FindPeers: a routing table's worth (k <= 256)
};

enum class BootstrapKind : std::uint8_t {
  AssignId = 1,
  IdAssigned = 2,
  RegisterDataset = 3,
  ReportLeader = 4,
  Done = 5,
  FindTracker = 6,
  TrackerFound = 7,
  ListDatasets = 8,
  Datasets = 9,
  FindPeers = 10,
  Peers = 11,
};

// A request answers with this kind.
BootstrapKind reply_kind(BootstrapKind request);
bool is_request(BootstrapKind kind);

// One decoded message; fields its kind does not use keep their defaults (and encode() ignores them).
struct BootstrapMessage {
  BootstrapKind kind = BootstrapKind::AssignId;
  std::uint64_t request_id = 0;
  std::string title;                // RegisterDataset, ReportLeader, FindTracker
  std::uint64_t generation = 0;     // ReportLeader, TrackerFound (listed)
  std::uint64_t term = 0;           // ReportLeader: the Raft term the sender leads in
  std::optional<PeerId> leader;     // ReportLeader (set), TrackerFound (when known)
  bool accepted = false;            // Done; TrackerFound: the dataset is listed
  dht::NodeId id;                   // IdAssigned
  std::vector<std::string> titles;  // Datasets
  std::uint64_t count = 0;          // FindPeers: how many peers are wanted
  std::vector<PeerId> peers;        // Peers: closest to the asker's id first
  friend bool operator==(const BootstrapMessage&, const BootstrapMessage&) = default;
};

std::vector<std::uint8_t> encode(const BootstrapMessage& m);
BootstrapMessage decode_bootstrap_message(std::span<const std::uint8_t> bytes, const BootstrapLimits& limits = {});

}  // namespace swarmlab::core::tracker
