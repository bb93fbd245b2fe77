#include "core/progress/global_progress.h"

#include <algorithm>
#include <limits>

namespace swarmlab::core::progress {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

double extrapolated(const PeerProgress& p, Seconds now) {
  return static_cast<double>(p.samples) + std::max(0.0, now - p.time) * p.samples_per_s;
}

// A peer one step behind, counted at its speed from when the records were read (global_progress.h).
double since_read(const PeerProgress& p, Seconds now, Seconds read_at) {
  return std::max(0.0, now - std::max(read_at, p.time)) * p.samples_per_s;
}
}  // namespace

GlobalProgress aggregate(std::span<const PeerProgress> records, Seconds now, const StepTarget& target,
                         std::uint64_t floor_step, std::span<const PeerId> group, Seconds read_at) {
  GlobalProgress g;
  g.now = now;
  g.global_step = floor_step;
  for (const PeerProgress& p : records)
    if (!p.client_mode) g.global_step = std::max(g.global_step, p.step);
  for (const PeerProgress& p : records) {
    ++g.peers;
    if (p.client_mode) ++g.clients;
    g.total_samples_per_s += p.samples_per_s;
  }
  if (target.per_peer_quota > 0) {
    const double quota = static_cast<double>(target.per_peer_quota);
    bool any = false;
    g.eta_s = 0;
    for (const PeerProgress& p : records) {
      if (!group.empty() && std::find(group.begin(), group.end(), p.peer) == group.end()) continue;
      // A worker still finishing the last round starts from nothing once it is done: from the
      // read on, as peers behind count in the pooled estimate below (a constant ETA re-estimated
      // between reads never came due: a group of averaging-only peers, quota 1, waited 3.7 s).
      if (p.step + 1 == g.global_step && p.samples_per_s > 0) {
        any = true;
        const double have = std::min(quota, since_read(p, now, read_at));
        g.estimated_samples += have;
        g.eta_s = std::max(g.eta_s, (quota - have) / p.samples_per_s);
        continue;
      }
      // Workers: peers that compute (a worker whose quota is in reports no speed any more).
      if (p.step != g.global_step || (!(p.samples_per_s > 0) && p.samples == 0)) continue;
      any = true;
      const double have = extrapolated(p, now);
      g.estimated_samples += std::min(quota, have);
      if (have < quota) g.eta_s = std::max(g.eta_s, p.samples_per_s > 0 ? (quota - have) / p.samples_per_s : kInfinity);
    }
    if (!any) g.eta_s = kInfinity;
  } else {
    // Peers still at an older step contribute speed (they will catch up and train towards the
    // next step) but none of their stale samples; one step behind, they count from the read on.
    for (const PeerProgress& p : records) {
      if (p.step == g.global_step) g.estimated_samples += extrapolated(p, now);
      else if (p.step + 1 == g.global_step) g.estimated_samples += since_read(p, now, read_at);
    }
    const double remaining = std::max(0.0, target.batch - g.estimated_samples);
    g.eta_s = remaining == 0 ? 0 : g.total_samples_per_s > 0 ? remaining / g.total_samples_per_s : kInfinity;
  }
  g.ready = g.eta_s == 0;
  return g;
}

}  // namespace swarmlab::core::progress
