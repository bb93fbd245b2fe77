#include "core/training/state_lineage.h"

#include <algorithm>
#include <vector>

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
  // Usually every holder agrees; peers read it after every progress read, so no allocation then.
  const std::uint64_t first = holders.front().lineage;
  if (std::all_of(holders.begin(), holders.end(), [&](const StateHolder& h) { return h.lineage == first; }))
    return first;
  std::vector<std::uint64_t> lineages;
  lineages.reserve(holders.size());
  for (const StateHolder& h : holders) lineages.push_back(h.lineage);
  std::sort(lineages.begin(), lineages.end());
  // The longest run; in ascending order, the first with the most holders wins a tie.
  std::uint64_t best = lineages.front();
  std::size_t best_count = 0;
  for (std::size_t i = 0; i < lineages.size();) {
    std::size_t j = i;
    while (j < lineages.size() && lineages[j] == lineages[i]) ++j;
    if (j - i > best_count) {
      best = lineages[i];
      best_count = j - i;
    }
    i = j;
  }
  return best;
}

}  // namespace swarmlab::core::training
