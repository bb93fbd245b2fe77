#pragma once
// Remembers the roles solved for a group: solving the planner is the costly part of starting a
// round, and a collaboration re-forms the same groups again and again. Roles are a pure function
// of the strategy and the members' announced capacities (the planner is deterministic), so one
// cache may serve every peer that a process hosts without changing any result.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/averaging/role_assignment.h"

namespace swarmlab::core::averaging {

class RolesCache {
 public:
  // Entries kept before the cache starts over (bounded memory under ever-changing links).
  static constexpr std::size_t kMaxEntries = 4096;

  // The roles for `input` (members in group order); nullptr when the group cannot average: nobody
  // computes, or the strategy cannot run with these members (assign_roles refuses). `server` fixes
  // the parameter server (a member index) for that strategy.
  const RoleAssignment* roles(Strategy strategy, const planner::PlannerInput& input,
                              std::optional<std::size_t> server = std::nullopt);

  std::uint64_t solves() const { return solves_; }
  std::uint64_t hits() const { return hits_; }

 private:
  std::map<std::vector<std::uint8_t>, std::optional<RoleAssignment>> cache_;
  std::uint64_t solves_ = 0, hits_ = 0;
};

}  // namespace swarmlab::core::averaging
