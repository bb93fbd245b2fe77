#include "core/training/state_lineage.h"

#include <algorithm>
#include <map>

#include "core/rng.h"

namespace swarmlab::core::training {
namespace {

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  std::uint64_t s = b;
  std::uint64_t t = a ^ splitmix64(s);
  return splitmix64(t);
}

}  // namespace

std::uint64_t lineage_after_round(std::uint64_t before, std::uint64_t round_id, std::span<const PeerId> unaveraged) {
  std::uint64_t lineage = mix(before, round_id);
  for (const PeerId p : unaveraged) lineage = mix(lineage, 0x5ba2000000000000ULL | p);
  return lineage;
}

std::uint64_t lineage_diverged(std::uint64_t before, std::uint64_t round_id, PeerId self) {
  return mix(mix(before, round_id), 0xd1ffe2e000000000ULL | self);
}

std::optional<std::uint64_t> consensus_lineage(std::span<const StateHolder> holders) {
  if (holders.empty()) return std::nullopt;
  std::map<std::uint64_t, std::size_t> count;
  for (const StateHolder& h : holders) ++count[h.lineage];
  // Map order is ascending lineage: the first with the most holders wins a tie.
  return std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) { return a.second < b.second; })
      ->first;
}

}  // namespace swarmlab::core::training
