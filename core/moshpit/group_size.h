#pragma once
// Choosing the Moshpit group size m from the number of peers n and the per-round, per-peer failure
// probability p (docs/dedloc.md §3). The model and its assumptions are written out in
// core/moshpit/README.md; in short, with the grid of core/moshpit/grid.h (d axes, groups of at
// most m):
//
//   E(m) = Σ_{axes k} E[ max over the groups g of axis k of Geometric((1 − p)^|g|) ]
//
// an axis is repeated, for the groups that failed, until every group on it has succeeded once.
#include <cstdint>
#include <optional>
#include <span>

#include "core/moshpit/grid.h"

namespace swarmlab::core::moshpit {

struct GroupSizeOption {
  std::uint64_t group_size = 0;
  double expected_rounds = 0.0;
};

struct GroupSizeChoice {
  GroupSizeOption best;
  std::optional<GroupSizeOption> runner_up;  // the next best distinct grid; none when n == 2
};

// Expected rounds for one axis: E[max_g T_g], T_g ~ Geometric on {1, 2, ...} with success
// probability (1 − p)^size. Groups of one peer need no exchange and always succeed.
double expected_axis_rounds(std::span<const GroupCount> groups, double failure_rate);

// E(m) for a grid: the sum of expected_axis_rounds over its axes.
double grid_expected_rounds(const GridShape& shape, double failure_rate);

// E(m) for the grid that group size m gives n peers (grid_shape(n, m)).
double expected_rounds(std::uint64_t peers, std::uint64_t group_size, double failure_rate);

// Minimises E(m) over m = 2..n. Group sizes that give the same grid (same d, hence the same side)
// are one choice, reported as the grid's side. Ties go to the larger group size (fewer rounds when
// nothing fails). Throws std::invalid_argument unless peers >= 2 and 0 <= failure_rate < 1.
GroupSizeChoice choose_group_size(std::uint64_t peers, double failure_rate);

}  // namespace swarmlab::core::moshpit
