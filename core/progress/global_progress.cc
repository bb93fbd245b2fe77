#include "core/progress/global_progress.h"

#include <algorithm>
#include <limits>

namespace swarmlab::core::progress {

GlobalProgress aggregate(std::span<const PeerProgress> records, Seconds now, double target_batch,
                         std::uint64_t floor_step) {
  GlobalProgress g;
  g.now = now;
  g.global_step = floor_step;
  for (const PeerProgress& p : records)
    if (!p.client_mode) g.global_step = std::max(g.global_step, p.step);
  for (const PeerProgress& p : records) {
    ++g.peers;
    if (p.client_mode) ++g.clients;
    g.total_samples_per_s += p.samples_per_s;
    // Peers still at an older step contribute speed (they will catch up and train towards the
    // next step) but none of their stale samples.
    if (p.step == g.global_step)
      g.estimated_samples += static_cast<double>(p.samples) + std::max(0.0, now - p.time) * p.samples_per_s;
  }
  const double remaining = std::max(0.0, target_batch - g.estimated_samples);
  if (remaining == 0) {
    g.eta_s = 0;
  } else {
    g.eta_s = g.total_samples_per_s > 0 ? remaining / g.total_samples_per_s : std::numeric_limits<double>::infinity();
  }
  return g;
}

}  // namespace swarmlab::core::progress
