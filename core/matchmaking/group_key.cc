#include "core/matchmaking/group_key.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/rng.h"

namespace swarmlab::core::matchmaking {

std::string group_key(std::string_view prefix, std::string_view bits) {
  if (!std::all_of(bits.begin(), bits.end(), [](char c) { return c == '0' || c == '1'; }))
    throw std::invalid_argument("matchmaking: group bits must be '0' or '1'");
  std::string key(prefix);
  key += ".0b";
  key += bits;
  return key;
}

int index_bits(std::size_t n) {
  int bits = 0;
  while ((std::size_t{1} << bits) < n) ++bits;
  return bits;
}

std::vector<std::uint64_t> member_indices(std::uint64_t group_id, std::size_t members, std::size_t pool) {
  pool = std::max(pool, members);
  std::vector<std::uint64_t> all(pool);
  std::iota(all.begin(), all.end(), std::uint64_t{0});
  // A partial Fisher-Yates shuffle: the first `members` entries are a uniform sample.
  Rng rng(group_id, 0x6D6D);
  for (std::size_t i = 0; i < members; ++i) std::swap(all[i], all[i + rng.below(pool - i)]);
  all.resize(members);
  return all;
}

std::string next_bits(std::string_view bits, std::uint64_t index, int width) {
  std::string extended(bits);
  for (int b = width - 1; b >= 0; --b) extended += ((index >> b) & 1) ? '1' : '0';
  return extended.substr(extended.size() - bits.size());
}

}  // namespace swarmlab::core::matchmaking
