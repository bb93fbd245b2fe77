#include "exec/live_scenario.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/input_error.h"

namespace swarmlab::exec {

void check_live_nat_traversal(const scenarios::Scenario& sc, bool punch_addresses) {
  if (sc.nat_traversal && sc.nat_traversal->hole_punching && !punch_addresses)
    throw core::InputError(sc.source, "nat_traversal.hole_punching",
                           "expected false, or a launch behind emulated NATs (launch --emulate-links --nat), which gives "
                           "the peers the addresses they punch to (docs/trust.md §4)");
}

scenarios::Scenario live_view(const scenarios::Scenario& scenario, const LiveOverrides& o) {
  if (!(o.scale > 0) || !std::isfinite(o.scale)) throw std::invalid_argument("scale must be a positive number");
  scenarios::Scenario s = scenario;
  for (auto& p : s.peers) {
    p.download_bps *= o.scale;
    p.upload_bps *= o.scale;
    if (o.zero_latency) p.latency_s = 0;
  }
  for (auto& cap : s.pair_caps) cap.bps *= o.scale;
  if (o.parameters) {
    if (*o.parameters == 0) throw std::invalid_argument("parameters must be >= 1");
    s.workload.parameters = *o.parameters;
  }
  if (o.precision) s.workload.wire_precision = *o.precision;
  // A live reducer's clip takes real processor time; the simulator's model of it must not add more.
  s.averaging.clip_cost = {};
  return s;
}

core::planner::PeerCapacity live_capacity(const scenarios::Scenario& live, core::PeerId peer, double goodput) {
  const scenarios::PeerSpec& p = live.peers.at(peer);
  return {p.compute_sps, p.download_bps * goodput, p.upload_bps * goodput,
          p.reachability == scenarios::Reachability::Client};
}

std::uint64_t network_id(const scenarios::Scenario& scenario, std::uint64_t run_id) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the name, then mixed with seed and run
  for (unsigned char c : scenario.name) h = (h ^ c) * 1099511628211ull;
  h ^= scenario.seed * 0x9E3779B97F4A7C15ull;
  h ^= run_id * 0xD1B54A32D192ED03ull;
  return h;
}

}  // namespace swarmlab::exec
