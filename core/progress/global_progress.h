#pragma once
// The collaboration's progress as one peer estimates it from everyone's published records
// (docs/dedloc.md §5, hivemind's progress tracker):
//   global step       = max step over non-client peers
//   estimated samples = Σ over peers at the global step of samples + max(0, now − time)·samples/s
//   ETA to next step  = max(0, B − estimated samples) / Σ samples/s (over every live peer)
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/env.h"
#include "core/progress/peer_progress.h"

namespace swarmlab::core::progress {

struct GlobalProgress {
  std::uint64_t global_step = 0;
  double estimated_samples = 0;    // towards the next step, extrapolated to `now`
  double eta_s = 0;                // 0 when the target is reached; +inf when nobody trains
  double total_samples_per_s = 0;
  std::size_t peers = 0;           // records that took part (clients included)
  std::size_t clients = 0;
  Seconds now = 0;                 // the moment this estimate is for
};

// `floor_step` is a step the caller knows has been reached (its own), so the global step never
// goes back when only client peers, or nobody, have published.
GlobalProgress aggregate(std::span<const PeerProgress> records, Seconds now, double target_batch,
                         std::uint64_t floor_step = 0);

}  // namespace swarmlab::core::progress
