#pragma once
// Remembers the roles solved for a group: solving the planner is the costly part of starting a
// round, and a collaboration re-forms the same groups again and again. Roles are a pure function
// of the strategy and the members' announced capacities (the planner is deterministic), so one
// cache may serve every peer that a process hosts without changing any result. Planned roles are
// solved on the members in capacity order and mapped back, so a group's order (matchmaking
// shuffles it) never changes who gets which role among members that differ (docs/interpretations.md
// §27).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "core/averaging/role_assignment.h"
#include "core/averaging/round_plan.h"
#include "core/wire.h"

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
  // The same for an input that the members asking share (core/training/group_input_cache.h): when
  // it is the object the previous call had, the answer comes without comparing inputs.
  const RoleAssignment* roles(Strategy strategy, const std::shared_ptr<const planner::PlannerInput>& input,
                              std::optional<std::size_t> server = std::nullopt);

  // The round plan for `roles` (an entry of this cache) with these members, built by `build` unless
  // the previous call asked for the same: every member of a group that a process hosts builds the
  // same plan, a pure function of the round id, the roles, the members, the length and the
  // encoding (at 256 members building it is O(n²) per member). When only the round id differs (the
  // same group again, as in a static collaboration), the previous plan is reused with the new id.
  const RoundPlan& round_plan(std::uint64_t round_id, const RoleAssignment& roles, const std::vector<PeerId>& members,
                              std::uint64_t length, codec::Codec codec, std::uint64_t part_bytes,
                              const std::function<RoundPlan()>& build);

  // predicted_round_seconds(roles, input, length, codec) for `roles`, an entry of this cache that
  // `input` was looked up to, remembered for the last arguments (every member asks the same).
  double predicted_seconds(const RoleAssignment& roles, const planner::PlannerInput& input, std::uint64_t length,
                           codec::Codec codec);

  // Increases whenever the cache starts over: a RoleAssignment pointer it returned stays valid
  // while generation() is unchanged.
  std::uint64_t generation() const { return generation_; }
  std::uint64_t solves() const { return solves_; }
  std::uint64_t hits() const { return hits_; }

 private:
  struct PlanKey {
    std::uint64_t round_id = 0;
    const RoleAssignment* roles = nullptr;
    std::uint64_t generation = 0;  // roles pointers are only unique between two clears of cache_
    std::vector<PeerId> members;
    std::uint64_t length = 0;
    codec::Codec codec = codec::Codec::Fp32;
    std::uint64_t part_bytes = 0;
  };
  const RoleAssignment* lookup(Strategy strategy, const planner::PlannerInput& input, std::optional<std::size_t> server);
  std::optional<RoleAssignment> solve(Strategy strategy, const planner::PlannerInput& input,
                                      std::optional<std::size_t> server);
  std::map<std::vector<std::uint8_t>, std::optional<RoleAssignment>, BytesLess> cache_;
  // Planned roles by the members' capacities in canonical order (roles()).
  std::map<std::vector<std::uint8_t>, std::optional<RoleAssignment>, BytesLess> canonical_;
  std::uint64_t generation_ = 0;
  // The last lookup: every member of a group that a process hosts asks for the same input at the
  // same instant, and comparing it is cheaper than building its key.
  struct LastLookup {
    Strategy strategy = Strategy::AllReduce;
    std::optional<std::size_t> server;
    planner::PlannerInput input;
    std::shared_ptr<const planner::PlannerInput> shared;  // when the caller shared it
    const RoleAssignment* roles = nullptr;
    std::uint64_t generation = 0;
  };
  std::optional<LastLookup> last_;
  struct PredictedKey {
    const RoleAssignment* roles = nullptr;
    std::uint64_t generation = 0;
    std::uint64_t length = 0;
    codec::Codec codec = codec::Codec::Fp32;
    bool operator==(const PredictedKey&) const = default;
  };
  std::optional<PredictedKey> predicted_key_;
  double predicted_ = 0;
  std::optional<PlanKey> plan_key_;
  RoundPlan plan_;
  std::uint64_t solves_ = 0, hits_ = 0;
};

}  // namespace swarmlab::core::averaging
