#pragma once
// The capacity a member attaches to its join request (Matchmaker::set_gathered), which every
// member of the group decodes to compute the same roles (core/matchmaking/group_plan.h).
//
// Encoding: u8 version (1), f64 compute_sps, f64 download_bps, f64 upload_bps, u8 client_mode.
#include <cstdint>
#include <span>
#include <vector>

#include "core/planner/planner.h"  // PeerCapacity (a plain struct: no GLPK needed to use it)

namespace swarmlab::core::matchmaking {

std::vector<std::uint8_t> encode_capacity(const planner::PeerCapacity& c);
// Throws DecodeError on anything else (negative or non-finite rates included).
planner::PeerCapacity decode_capacity(std::span<const std::uint8_t> bytes);

}  // namespace swarmlab::core::matchmaking
