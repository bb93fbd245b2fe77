#pragma once
// Messages of the live round barrier, the v1 stand-in for matchmaking in live runs. They travel
// under their own service byte (kRoundBarrierService, outside the core's Service values, so they
// never collide with core matchmaking messages):
//   u8 service | u8 kind | ...
//   Ready (1): u64 incarnation | u64 next_round | announce      peer -> coordinator
//   Start (2): u64 round | varint count | count × (u32 peer | announce)   coordinator -> members
//   Done  (3): (nothing)                                         coordinator -> everyone
//   announce = f64 compute_sps | f64 download_bps | f64 upload_bps | u8 client_mode
// A peer announces its role inputs in Ready; Start carries every member's announcement, so all
// members run the planner on identical input and agree on the plan without further messages.
#include <cstdint>
#include <utility>
#include <variant>
#include <vector>

#include "core/env.h"
#include "core/message.h"
#include "core/service_ids.h"

namespace swarmlab::exec {

// The first byte of every barrier message. core::Service has a fixed uint8_t underlying type, so
// any byte is a valid value; this one is reserved for the live mode.
inline constexpr core::Service kRoundBarrierService = static_cast<core::Service>(0xE0);

struct Announce {
  double compute_sps = 0;
  double download_bps = 0;  // bits/s as the planner should see them (goodput, scaled)
  double upload_bps = 0;
  bool client_mode = false;
  bool operator==(const Announce&) const = default;
};

struct ReadyMsg {
  std::uint64_t incarnation = 0;  // random per process: tells a restarted peer from a late message
  std::uint64_t next_round = 0;   // the first round this peer can run (0 for a fresh process)
  Announce announce;
};

struct StartMsg {
  std::uint64_t round = 0;
  std::vector<std::pair<core::PeerId, Announce>> members;  // ascending ids
};

struct DoneMsg {};

using RoundMessage = std::variant<ReadyMsg, StartMsg, DoneMsg>;

core::Message encode_round_message(const RoundMessage& m);
// Throws core::DecodeError on malformed input (and on more members than `max_peers`).
RoundMessage decode_round_message(const core::Message& m, std::size_t max_peers);

}  // namespace swarmlab::exec
