#pragma once
// Moshpit grouping (docs/dedloc.md §3): peers sit on a virtual d-dimensional grid and round t
// averages along axis t mod d, so with n = side^d peers and no failures every peer holds the exact
// global average after d rounds.
//
// For a group size limit m and n peers:
//   d    = ⌈log_m n⌉                 (the fewest rounds groups of at most m can reach everyone in)
//   side = ⌈n^(1/d)⌉ ≤ m             (the most cubic grid with d axes that holds n peers)
// Peer i has the base-`side` digits of i as coordinates (axis 0 = least significant digit); slots
// i ≥ n are empty. A group along axis k is a line of peers that agree on every digit but digit k.
// When side^d > n the lines that run into the empty slots are shorter ("partial groups"): they lie
// in the last, incomplete block of the grid, and can be as small as one peer (a no-op). Uniform
// averaging over partial groups still preserves the global mean and mixes, so values converge to
// the average geometrically, but the exact average after d rounds is only guaranteed when
// side^d == n. Using side rather than m keeps groups as even as possible: for n = 64 and m = 5,
// d = 3 and side = 4, a full 4×4×4 grid.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/moshpit/partition.h"

namespace swarmlab::core::moshpit {

struct GridShape {
  std::uint64_t peers = 0;
  std::uint64_t dims = 0;  // d
  std::uint64_t side = 0;
  bool complete() const;  // side^dims == peers
};

// Throws std::invalid_argument unless 2 <= peers <= 2^62 and max_group_size >= 2.
GridShape grid_shape(std::uint64_t peers, std::uint64_t max_group_size);

struct GroupCount {
  std::uint64_t size = 0;
  std::uint64_t count = 0;
};
// The sizes of the groups along one axis, largest first, without building them (works for any n).
std::vector<GroupCount> group_sizes(const GridShape& shape, std::uint64_t axis);

// The grid with its groups built, for simulation. Peers are numbered 0..peers-1 (< 2^32).
class Grid {
 public:
  Grid(std::uint64_t peers, std::uint64_t max_group_size);

  const GridShape& shape() const { return shape_; }
  std::size_t peers() const { return static_cast<std::size_t>(shape_.peers); }
  std::size_t dims() const { return static_cast<std::size_t>(shape_.dims); }
  std::size_t side() const { return static_cast<std::size_t>(shape_.side); }

  std::size_t axis_of_round(std::uint64_t round) const { return static_cast<std::size_t>(round % shape_.dims); }
  // Groups of an axis, ordered by their lowest member; members in increasing order.
  const Partition& groups(std::size_t axis) const { return axes_[axis]; }
  const Partition& groups_in_round(std::uint64_t round) const { return axes_[axis_of_round(round)]; }
  // Index into groups(axis) of the group holding `peer`.
  std::size_t group_of(std::uint32_t peer, std::size_t axis) const { return group_index_[axis][peer]; }
  // Digit k of the peer's index in base side().
  std::vector<std::uint64_t> coordinates(std::uint32_t peer) const;

 private:
  GridShape shape_;
  std::vector<Partition> axes_;
  std::vector<std::vector<std::uint32_t>> group_index_;
};

}  // namespace swarmlab::core::moshpit
