#pragma once
// What a member attaches to its join request (Matchmaker::set_gathered), which every member of the
// group decodes: the capacity, to compute the same roles (core/matchmaking/group_plan.h), and the
// step of the training state it holds, so that every member leaves the same trainers out of a group
// that mixes steps (docs/interpretations.md §26).
//
// Encoding: u8 version (2), f64 compute_sps, f64 download_bps, f64 upload_bps, u8 client_mode,
// u8 holds_state, then u64 state step when holds_state is 1.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/planner/planner.h"  // PeerCapacity (a plain struct: no GLPK needed to use it)

namespace swarmlab::core::matchmaking {

struct Announcement {
  planner::PeerCapacity capacity;
  // The step of the collaboration's state this peer holds and trains on; none for a peer that
  // holds none (a pure reducer, or one that never loads the collaboration's state).
  std::optional<std::uint64_t> state_step;
  friend bool operator==(const Announcement&, const Announcement&) = default;
};

std::vector<std::uint8_t> encode_announcement(const Announcement& a);
// Throws DecodeError on anything else (negative or non-finite rates included).
Announcement decode_announcement(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::matchmaking
