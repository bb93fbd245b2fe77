#pragma once
// The messages that reboot a tracker group lost entirely (docs/hydra.md §2, reboot.h): the dataset's
// creator asks each peer of the new generation to host it, and each answers.
//
// RebootRequest = u8 service (ServiceId::Tracker), u8 kind 1, varint request_id, str title,
//                 varint generation (>= 1),
//                 varint n >= 1, n × varint peer     founding members, strictly ascending
//                 varint m >= n, m × varint peer     candidates, closest to the key first, distinct,
//                                                    the founding members among them
//                 bytes state                        the snapshot; empty for a peer that only waits
//                                                    as a candidate
// RebootReply   = u8 service, u8 kind 2, varint request_id, varint generation, u8 status
//
// The decoders accept exactly this within RebootLimits: unknown kinds or statuses, generation 0,
// peers above 2^32 - 1, unsorted or repeated members, repeated candidates, a member that is not a
// candidate, oversized fields, truncation and trailing bytes all throw DecodeError. Whether the
// state restores is the host's check (reboot_storage), not the decoder's.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/raft/types.h"
#include "core/types.h"
#include "core/wire.h"

namespace swarmlab::core::tracker {

struct RebootLimits {
  std::size_t max_title_bytes = 256;   // TrackerLimits::max_title_bytes
  std::size_t max_members = 256;       // raft::WireLimits::max_members
  std::size_t max_candidates = 4096;
  std::size_t max_state_bytes = 8u << 20;  // raft::WireLimits::max_snapshot_bytes
};

enum class RebootStatus : std::uint8_t {
  Hosting = 1,       // the peer hosts the new generation (also the answer to a repeated request)
  Stale = 2,         // the peer already serves a later generation of this dataset's tracker
  NotCandidate = 3,  // the peer is not among the request's candidates
  BadState = 4,      // the snapshot does not restore
};

struct RebootRequest {
  std::uint64_t request_id = 0;
  std::string title;
  std::uint64_t generation = 1;
  std::vector<PeerId> members;
  std::vector<PeerId> candidates;
  raft::Bytes state;
  friend bool operator==(const RebootRequest&, const RebootRequest&) = default;
};

struct RebootReply {
  std::uint64_t request_id = 0;
  std::uint64_t generation = 1;
  RebootStatus status = RebootStatus::Hosting;
  friend bool operator==(const RebootReply&, const RebootReply&) = default;
};

enum class RebootKind : std::uint8_t { Request = 1, Reply = 2 };

std::vector<std::uint8_t> encode(const RebootRequest& m);
std::vector<std::uint8_t> encode(const RebootReply& m);
// The kind of a Tracker-service message from its first two bytes; throws DecodeError otherwise.
RebootKind peek_reboot_kind(std::span<const std::uint8_t> bytes);
RebootRequest decode_reboot_request(std::span<const std::uint8_t> bytes, const RebootLimits& limits = {});
RebootReply decode_reboot_reply(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::tracker
