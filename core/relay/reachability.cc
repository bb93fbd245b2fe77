#include "core/relay/reachability.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace swarmlab::core::relay {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: a pair hash with no structure
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

Reachability::Reachability(ReachabilityConfig config) : config_(std::move(config)) {
  for (std::size_t r = 0; r < config_.relays.size(); ++r) {
    const PeerId p = config_.relays[r].peer;
    if (p >= config_.nat.size())
      throw std::invalid_argument("reachability: relay " + std::to_string(p) + " is not a peer of the collaboration");
    if (config_.nat[p] != Nat::None)
      throw std::invalid_argument("reachability: relay " + std::to_string(p) + " is behind NAT; a relay must accept connections");
    for (std::size_t q = 0; q < r; ++q)
      if (config_.relays[q].peer == p) throw std::invalid_argument("reachability: relay " + std::to_string(p) + " listed twice");
  }
}

bool Reachability::direct(PeerId a, PeerId b) const {
  const Nat x = config_.nat.at(a), y = config_.nat.at(b);
  if (x == Nat::None || y == Nat::None) return true;
  return config_.hole_punching && x == Nat::Cone && y == Nat::Cone;
}

std::optional<PeerId> Reachability::relay_for(PeerId a, PeerId b) const {
  if (direct(a, b) || config_.relays.empty()) return std::nullopt;
  const std::uint64_t lo = std::min(a, b), hi = std::max(a, b);
  return config_.relays[mix((lo << 32) | hi) % config_.relays.size()].peer;
}

void Reachability::add_routes(planner::PlannerInput& input, std::span<const PeerId> members) const {
  const std::size_t n = members.size();
  input.routes.assign(n, std::vector<int>(n, planner::kDirect));
  input.relays.clear();
  std::vector<int> slot(config_.relays.size(), -1);  // offer -> index in input.relays
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j || direct(members[i], members[j])) continue;
      const std::optional<PeerId> relay = relay_for(members[i], members[j]);
      if (!relay) {
        input.routes[i][j] = planner::kUnreachable;
        continue;
      }
      std::size_t offer = 0;
      while (config_.relays[offer].peer != *relay) ++offer;
      if (slot[offer] < 0) {
        planner::RelayLink link{config_.relays[offer].download_bps, config_.relays[offer].upload_bps, std::nullopt};
        const auto at = std::find(members.begin(), members.end(), *relay);
        if (at != members.end()) {
          // A member relays over the links it announced for the round.
          link.member = static_cast<std::size_t>(at - members.begin());
          link.download_bps = input.peers.at(*link.member).download_bps;
          link.upload_bps = input.peers.at(*link.member).upload_bps;
        }
        slot[offer] = static_cast<int>(input.relays.size());
        input.relays.push_back(link);
      }
      input.routes[i][j] = slot[offer];
    }
  }
}

}  // namespace swarmlab::core::relay
