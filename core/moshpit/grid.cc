#include "core/moshpit/grid.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace swarmlab::core::moshpit {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// a·b, saturating at 2^64 − 1 (only comparisons with peer counts follow).
std::uint64_t mul_sat(std::uint64_t a, std::uint64_t b) { return b != 0 && a > kMax / b ? kMax : a * b; }

std::uint64_t pow_sat(std::uint64_t base, std::uint64_t exp) {
  std::uint64_t r = 1;
  for (std::uint64_t i = 0; i < exp && r != kMax; ++i) r = mul_sat(r, base);
  return r;
}

}  // namespace

bool GridShape::complete() const { return pow_sat(side, dims) == peers; }

GridShape grid_shape(std::uint64_t peers, std::uint64_t max_group_size) {
  if (peers < 2) throw std::invalid_argument("a grid needs at least 2 peers, got " + std::to_string(peers));
  if (peers > (std::uint64_t{1} << 62)) throw std::invalid_argument("at most 2^62 peers");
  if (max_group_size < 2)
    throw std::invalid_argument("the group size must be at least 2, got " + std::to_string(max_group_size));
  GridShape s;
  s.peers = peers;
  s.dims = 1;
  while (pow_sat(max_group_size, s.dims) < peers) ++s.dims;
  // Smallest side with side^dims >= peers; at most 64 halvings.
  std::uint64_t lo = 2, hi = std::min(max_group_size, peers);
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (pow_sat(mid, s.dims) >= peers) hi = mid;
    else lo = mid + 1;
  }
  s.side = lo;
  return s;
}

std::vector<GroupCount> group_sizes(const GridShape& shape, std::uint64_t axis) {
  if (axis >= shape.dims) throw std::invalid_argument("axis out of range");
  // Index i = high·side^(k+1) + digit·side^k + low. Lines with high < ⌊n / side^(k+1)⌋ are full;
  // the one remaining block of R = n mod side^(k+1) peers holds R mod stride lines of length
  // ⌊R / stride⌋ + 1 and the rest of length ⌊R / stride⌋.
  const std::uint64_t stride = pow_sat(shape.side, axis);  // < n, since side^(dims-1) < n
  const std::uint64_t block = mul_sat(stride, shape.side);  // saturated only when > n
  const std::uint64_t n = shape.peers;
  const std::uint64_t full = n / block * stride;
  const std::uint64_t rest = n % block;
  const std::uint64_t len = rest / stride, longer = rest % stride;
  std::vector<GroupCount> out;
  auto add = [&](std::uint64_t size, std::uint64_t count) {
    if (count == 0 || size == 0) return;
    if (!out.empty() && out.back().size == size) out.back().count += count;
    else out.push_back({size, count});
  };
  add(shape.side, full);
  add(len + 1, longer);
  add(len, stride - longer);
  return out;
}

Grid::Grid(std::uint64_t peers, std::uint64_t max_group_size) : shape_(grid_shape(peers, max_group_size)) {
  if (peers > std::numeric_limits<std::uint32_t>::max())
    throw std::invalid_argument("a simulated grid holds at most 2^32 - 1 peers");
  const std::uint64_t n = peers;
  axes_.resize(shape_.dims);
  group_index_.assign(shape_.dims, std::vector<std::uint32_t>(n));
  std::uint64_t stride = 1;
  for (std::size_t k = 0; k < shape_.dims; ++k, stride *= shape_.side) {
    Partition& part = axes_[k];
    part.members.reserve(n);
    for (std::uint64_t i = 0; i < n; ++i) {
      if ((i / stride) % shape_.side != 0) continue;  // not the first peer of its line
      const std::size_t g = part.groups();
      for (std::uint64_t c = 0, j = i; c < shape_.side && j < n; ++c, j += stride) {
        part.members.push_back(static_cast<std::uint32_t>(j));
        group_index_[k][j] = static_cast<std::uint32_t>(g);
      }
      part.close_group();
    }
  }
}

std::vector<std::uint64_t> Grid::coordinates(std::uint32_t peer) const {
  std::vector<std::uint64_t> c(shape_.dims);
  std::uint64_t rest = peer;
  for (auto& digit : c) {
    digit = rest % shape_.side;
    rest /= shape_.side;
  }
  return c;
}

}  // namespace swarmlab::core::moshpit
