#pragma once
// Moshpit averaging on real vectors (docs/dedloc.md §3), against the two baselines it replaces:
//   moshpit            grid groups (core/moshpit/grid.h), round t averages along axis t mod d
//   allreduce_restart  one all-reduce over all N peers, repeated until a round where nobody fails
//   random_groups      a fresh uniformly random partition into groups of m every round
// Every round each peer fails independently with probability p (the same draws for all three): a
// failed peer keeps its value, sits the round out and rejoins the next one. A group averages its
// live members exactly, with uniform weights.
//
// The reported error after round t is the relative distance to the initial mean x̄,
//   sqrt( Σ_i ‖x_i(t) − x̄‖² / Σ_i ‖x_i(0) − x̄‖² ),
// so 1 at the start and 0 once every peer holds x̄. (The JSON fields are named *_mse for
// compatibility with the issue; they hold this relative error, not a mean squared error.)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/moshpit/grid.h"
#include "core/moshpit/partition.h"

namespace swarmlab::sim {

struct MoshpitConfig {
  std::uint64_t peers = 512;
  std::uint64_t group_size = 8;
  double failure_rate = 0.0;
  std::uint64_t rounds = 10;
  std::uint64_t seed = 0;
  std::size_t dim = 64;
  double target = 1e-9;
};

struct MoshpitRoundError {
  std::uint64_t round = 0;  // 1-based: the error after this many rounds
  double moshpit = 0.0;
  double allreduce_restart = 0.0;
  double random_groups = 0.0;
};

struct MoshpitResult {
  MoshpitConfig config;
  core::moshpit::GridShape grid;
  std::vector<MoshpitRoundError> per_round;
  // The first round whose error is below config.target; empty if none within config.rounds.
  std::optional<std::uint64_t> moshpit_to_target;
  std::optional<std::uint64_t> allreduce_restart_to_target;
  std::optional<std::uint64_t> random_groups_to_target;
};

// Throws std::invalid_argument on a bad configuration (peers < 2, group size < 2, p outside
// [0, 1), rounds or dim 0, target not positive, or more than 2^28 values per method).
MoshpitResult run_moshpit_experiment(const MoshpitConfig& config);

// {"rounds_to_target": {...}, "per_round": [...]} (see cli/moshpit_command.cc), and a text table.
std::string moshpit_json(const MoshpitResult& result);
std::string moshpit_text(const MoshpitResult& result);

// One averaging round in place: every group of `groups` replaces the rows of its live members by
// their mean. `values` holds one row of `dim` numbers per peer; `alive[i]` != 0 if peer i takes
// part; `scratch` needs dim elements. Instantiated for float and double.
template <typename T>
void average_groups(std::span<T> values, std::size_t dim, const core::moshpit::Partition& groups,
                    std::span<const std::uint8_t> alive, std::span<T> scratch);

}  // namespace swarmlab::sim
