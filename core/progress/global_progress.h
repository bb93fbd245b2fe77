#pragma once
// The collaboration's progress as one peer estimates it from everyone's records (docs/dedloc.md §5,
// hivemind's progress tracker). For a pooled target (DeDLOC):
//   global step       = max step over non-client peers
//   estimated samples = Σ over peers at the global step of samples + max(0, now − time)·samples/s
//                     + Σ over peers one step behind of max(0, now − max(read_at, time))·samples/s
//   ETA to next step  = max(0, B − estimated samples) / Σ samples/s (over every live peer)
// A peer one step behind is finishing the last round, or has not published since; the ETA counts
// its speed, so the estimate counts it too from when the records were read (`read_at`). Counting
// its speed but none of its samples made an estimate that was re-read without a fetch recede:
// each wake-up found only the published peers' share of the ETA done (0.155, 0.125, 0.100, ... s
// for a peer alone at the new step), and a live peer started its round 0.4 s after the others.
// For a per-peer quota (DiLoCo's H inner steps; averaging-only runs' fixed batch) every peer that
// computes and is at the global step must reach the quota:
//   estimated samples = Σ min(quota, that peer's extrapolated samples)
//   ETA               = max over those peers of (quota − extrapolated samples) / samples/s
// and a computing peer one step behind (still in the last round) needs its whole quota after it,
// counted from when the records were read (below).
// A group formed for the step (`group` not empty) waits under a quota for its own members only:
// it averages nobody else's contribution, and a peer outside it that died after its last round
// would otherwise hold the group up as "still in the last round" until its record expired.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "core/progress/peer_progress.h"
#include "core/types.h"

namespace swarmlab::core::progress {

// When the next global step is due.
struct StepTarget {
  double batch = 0;                 // pooled: samples of the whole collaboration (B)
  std::uint64_t per_peer_quota = 0; // > 0: instead, every computing peer contributes exactly this many
};

struct GlobalProgress {
  std::uint64_t global_step = 0;
  double estimated_samples = 0;    // towards the next step, extrapolated to `now`
  double eta_s = 0;                // 0 when the target is reached; +inf when nobody trains
  bool ready = false;              // the target is reached (eta_s == 0)
  double total_samples_per_s = 0;
  std::size_t peers = 0;           // records that took part (clients included)
  std::size_t clients = 0;
  Seconds now = 0;                 // the moment this estimate is for
};

// `floor_step` is a step the caller knows has been reached (its own), so the global step never
// goes back when only client peers, or nobody, have published.
// `group`: the members of a formed group (above); empty for the whole collaboration.
// `read_at`: when `records` were read (+infinity, the default: peers behind count for nothing).
GlobalProgress aggregate(std::span<const PeerProgress> records, Seconds now, const StepTarget& target,
                         std::uint64_t floor_step = 0, std::span<const PeerId> group = {},
                         Seconds read_at = std::numeric_limits<double>::infinity());

}  // namespace swarmlab::core::progress
