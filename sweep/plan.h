#pragma once
// The runs of a sweep: sampled points × crossed values × seeds, each with its axis values. The
// plan is a pure function of the spec (same spec, same plan, on every machine and MPI rank).
//
// Sampling (sweep/README.md): the axes not marked "crossed" are sampled together — a grid (every
// combination of their levels), `count` independent uniform draws, or a Latin hypercube of `count`
// points (each axis's [0, 1) cut into `count` strata, one point per stratum, strata paired by
// independent random permutations) — and every point then runs at every combination of the crossed
// axes' levels, with every seed. Ranges map u in [0, 1) linearly or logarithmically; continuous
// samples are rounded to 4 significant digits so that tables stay readable; integer axes get
// integers.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sweep/spec.h"

namespace swarmlab::sweep {

struct RunDesc {
  std::size_t index = 0;        // the run's number (its result file, its table row)
  std::size_t composition = 0;  // the distinct assignment of every axis (runs differ only by seed)
  std::uint64_t seed = 0;
  std::vector<json> values;     // one per axis, in spec order
};

struct SweepPlan {
  std::vector<RunDesc> runs;    // by index
  std::size_t compositions = 0;
};

SweepPlan make_plan(const SweepSpec& spec);

// The levels a grid (or a crossed axis) takes: the list, or `levels` points spread over the range.
std::vector<json> grid_levels(const Axis& axis, std::uint64_t levels);
// The value at u in [0, 1) of an axis's domain.
json value_at(const Axis& axis, double u);

}  // namespace swarmlab::sweep
