#pragma once
// Turns an averaging strategy into roles for one round: who sends a vector (and with what weight)
// and what fraction of the vector each peer reduces. Table 1's three strategies, and Hydra's:
// - AllReduce: butterfly all-reduce with equal shares among the peers that compute (the classic
//   all-reduce among trainers; auxiliary peers sit out).
// - ParameterServer: one peer reduces everything. The server is the reachable peer with the
//   largest min(upload, download), the lowest index on ties: the peer a practitioner would pick.
// - Planned: the LP planner's fractions (core/planner), every compute-capable peer sending.
// - HalvingDoubling: AR's roles, and the senders ranked fastest first (min(upload, download),
//   lowest index on ties) for the places of the exchange: the fastest partner the extras beyond
//   the largest power of two, whose whole vectors they take in and send back.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/averaging/round_plan.h"
#include "core/averaging/strategy.h"
#include "core/planner/planner.h"

namespace swarmlab::core::averaging {

struct RoleAssignment {
  std::vector<double> weights;    // per peer: 1 for peers that compute (send), 0 otherwise
  std::vector<double> fractions;  // per peer: share of the vector it reduces; sums to 1
  std::optional<std::size_t> server;   // ParameterServer only
  std::optional<planner::Plan> plan;   // Planned only
  std::vector<std::size_t> exchange_order;  // HalvingDoubling only: the senders, fastest first
};

// Throws std::invalid_argument when the strategy cannot run (nobody computes, nobody reachable).
// `server` fixes the parameter server (ParameterServer only); it must be a reachable peer. Without
// it the server is the reachable peer with the largest min(upload, download), lowest index on ties.
RoleAssignment assign_roles(Strategy strategy, const planner::PlannerInput& peers,
                            std::optional<std::size_t> server = std::nullopt);

// Roles among the peers with `members[i]` set (those up, or one Moshpit group), indexed like
// `peers`: the others get weight 0 and fraction 0. `server` is a peer index, used if it is a member.
RoleAssignment assign_roles_among(Strategy strategy, const planner::PlannerInput& peers,
                                  const std::vector<bool>& members, std::optional<std::size_t> server = std::nullopt);

// How long a round with these roles lasts when each member's access link is all that limits it:
// the most any member must upload or download (its share of every sender's vector in, the
// averaged share back out, its own vector to the other reducers, the averages of their spans
// back), over its link. Latency and contention elsewhere are ignored; +infinity when a needed link
// has no capacity. The adaptive timeouts scale with it (core/training/round_timeouts.h).
double predicted_round_seconds(const RoleAssignment& roles, const planner::PlannerInput& peers, std::uint64_t length,
                               codec::Codec codec);

// The round plan for peers 0..n-1 of `roles`: members are the peers that send or reduce, in index
// order; spans follow the fractions (largest remainder).
RoundPlan make_round_plan(std::uint64_t round_id, const RoleAssignment& roles, std::uint64_t length,
                          codec::Codec codec, std::uint64_t part_bytes = kDefaultPartBytes);

}  // namespace swarmlab::core::averaging
