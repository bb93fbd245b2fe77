#include "scenarios/nat_traversal.h"

#include <stdexcept>

#include "core/rng.h"

namespace swarmlab::scenarios {

core::relay::ReachabilityConfig reachability_config(const Scenario& sc) {
  if (!sc.nat_traversal) throw std::logic_error("reachability_config: the scenario has no nat_traversal");
  const NatTraversalSpec& spec = *sc.nat_traversal;
  core::relay::ReachabilityConfig c;
  c.hole_punching = spec.hole_punching;
  // Its own stream: adding NAT draws changes no other random choice of the run.
  core::Rng rng(sc.seed, 0x4E415454ull);  // "NATT"
  for (const PeerSpec& p : sc.peers) {
    if (p.reachability == Reachability::Public) {
      c.nat.push_back(core::relay::Nat::None);
      continue;
    }
    const bool cone = rng.uniform() < spec.cone_share;  // drawn for every client, given or not
    const NatType type = p.nat.value_or(cone ? NatType::Cone : NatType::Symmetric);
    c.nat.push_back(type == NatType::Cone ? core::relay::Nat::Cone : core::relay::Nat::Symmetric);
  }
  for (std::size_t r : spec.relays)
    c.relays.push_back({static_cast<core::PeerId>(r), sc.peers[r].download_bps, sc.peers[r].upload_bps});
  return c;
}

}  // namespace swarmlab::scenarios
