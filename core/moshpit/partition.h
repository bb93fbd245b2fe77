#pragma once
// A partition of peers into averaging groups, stored flat (one member array plus offsets) so that
// a round over thousands of groups walks two contiguous arrays and allocates nothing.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace swarmlab::core::moshpit {

struct Partition {
  std::vector<std::uint32_t> members;  // peers, group after group
  std::vector<std::size_t> offsets{0};  // group g is members[offsets[g], offsets[g + 1])

  std::size_t groups() const { return offsets.size() - 1; }
  std::span<const std::uint32_t> group(std::size_t g) const {
    return std::span<const std::uint32_t>(members).subspan(offsets[g], offsets[g + 1] - offsets[g]);
  }
  void clear() {
    members.clear();
    offsets.assign(1, 0);
  }
  // Closes the group made of the members appended since the previous call.
  void close_group() { offsets.push_back(members.size()); }
};

}  // namespace swarmlab::core::moshpit
