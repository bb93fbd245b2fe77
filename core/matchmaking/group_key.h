#pragma once
// Moshpit group keys (docs/dedloc.md §3). Peers that look for a group together share a DHT key
// "{prefix}.0b{bits}". After a group forms, each member takes a distinct index drawn from an RNG
// seeded with the group id and shifts its binary form into its bits, so the next round's groups
// each draw their members from different current groups (a virtual grid: with bits of length
// d·log2(m) and groups of m, round t averages along one axis).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace swarmlab::core::matchmaking {

// "{prefix}.0b{bits}". Throws std::invalid_argument unless `bits` is made of '0' and '1'.
std::string group_key(std::string_view prefix, std::string_view bits);

// ceil(log2(n)) for n >= 1: the bits that name one of n indices.
int index_bits(std::size_t n);

// Distinct indices in [0, max(pool, members)) for `members` members, in member order, drawn from
// an RNG seeded with `group_id` so every member computes the same ones. hivemind draws them from
// [0, target_group_size), so a group smaller than the target still reaches every next key.
std::vector<std::uint64_t> member_indices(std::uint64_t group_id, std::size_t members, std::size_t pool);

// (bits + binary(index, width))[-len(bits):]: the shift register. Empty bits stay empty.
std::string next_bits(std::string_view bits, std::uint64_t index, int width);

}  // namespace swarmlab::core::matchmaking
