#pragma once
// Who can open a connection to whom, and which relay carries a pair that cannot (docs/trust.md
// §4). Every peer of a collaboration holds the same Reachability, so the relay a pair uses, the
// routes the planner charges and the routes the environment takes are the same everywhere.
//
// - A public peer accepts connections; a peer behind NAT (client mode) does not, but dials out,
//   so a pair with at least one public peer always connects directly.
// - Two peers behind NAT connect directly only after a hole punch, which succeeds when both NATs
//   map endpoint-independently ("cone"); a symmetric NAT gives each destination a new port, so
//   the port the other side learned is wrong (Ford, Srisuresh and Kegel 2005).
// - Otherwise their messages go through a relay: a public peer that offers relaying. A pair's
//   relay is one of the relays picked by a hash of the pair, the same both ways (a circuit), so
//   the relayed load spreads over the relays.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/planner/planner.h"
#include "core/types.h"

namespace swarmlab::core::relay {

enum class Nat : std::uint8_t {
  None,       // public: accepts connections
  Cone,       // endpoint-independent mapping: hole punching works with another cone NAT
  Symmetric,  // endpoint-dependent mapping: no hole punching
};

struct RelayOffer {
  PeerId peer = 0;
  double download_bps = 0;  // the relay's access link, which relayed traffic shares
  double upload_bps = 0;
};

struct ReachabilityConfig {
  std::vector<Nat> nat;             // per peer of the collaboration
  std::vector<RelayOffer> relays;   // public peers that relay; none: NAT'd pairs stay unreachable
  bool hole_punching = false;       // cone-cone pairs connect directly
};

class Reachability {
 public:
  // Throws std::invalid_argument for a relay that is out of range, behind NAT or listed twice.
  explicit Reachability(ReachabilityConfig config);

  std::size_t size() const { return config_.nat.size(); }
  // Whether a and b connect without a relay.
  bool direct(PeerId a, PeerId b) const;
  // The relay of a pair that does not connect directly (the same both ways); nullopt when the
  // pair is direct or no relay can carry it.
  std::optional<PeerId> relay_for(PeerId a, PeerId b) const;

  // Sets input.routes and input.relays for a round among `members` (input.peers in that order):
  // direct, relayed (the relay is a member or an outside relay with its offered links) or
  // unreachable.
  void add_routes(planner::PlannerInput& input, std::span<const PeerId> members) const;

 private:
  ReachabilityConfig config_;
};

}  // namespace swarmlab::core::relay
