#pragma once
// Names for the state a peer holds, so that peers can tell from their progress records whether
// they hold the same parameters (docs/interpretations.md §26).
//
// Every peer starts from the same initial state, lineage 0. A sender of a round gets the lineage
// mix(before, round, unaveraged spans): peers with equal lineages that finish the same round apply
// the same averaged vector to the same state and so hold the same state again (rounds are
// deterministic, docs/interpretations.md §25). A span whose average did not wholly come back (a
// reducer died, a timeout) takes no update on that peer (the peer zeroes it), so peers that missed
// the same spans still agree. A training peer that took a step without applying it (it sat the
// round out, or only reduced) holds a state nobody else does: its lineage is mixed with its own
// id. A state download copies the provider's lineage. A peer that does not train has no use for
// the parameters and does not download them after every round it reduced: it reports kNoState.
//
// A collaboration settles on one lineage per step: the one most peers at that step hold, ties to
// the smallest value. A training peer that holds another one at that step downloads the state.
#include <cstdint>
#include <optional>
#include <span>

#include "core/types.h"

namespace swarmlab::core::training {

// A peer that does not train and took a step it only helped reduce: its parameters are no step's.
// It serves state only when nobody else can.
inline constexpr std::uint64_t kNoState = ~std::uint64_t{0};

struct StateHolder {
  PeerId peer = 0;
  std::uint64_t lineage = 0;
};

// After a round with `round_id` that this peer sent to; `unaveraged` names the members whose spans
// it did not get back whole (in plan order; empty when the whole vector was averaged).
std::uint64_t lineage_after_round(std::uint64_t before, std::uint64_t round_id, std::span<const PeerId> unaveraged = {});
// After a step whose state only `self` holds.
std::uint64_t lineage_diverged(std::uint64_t before, std::uint64_t round_id, PeerId self);

// The lineage the collaboration settles on among `holders` (peers at one step); nullopt if empty.
std::optional<std::uint64_t> consensus_lineage(std::span<const StateHolder> holders);

}  // namespace swarmlab::core::training
