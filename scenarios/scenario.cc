#include "scenarios/scenario.h"

namespace swarmlab::scenarios {

std::optional<std::size_t> Scenario::find_peer(std::string_view name) const {
  for (std::size_t i = 0; i < peers.size(); ++i)
    if (peers[i].name == name) return i;
  return std::nullopt;
}

bool Scenario::peer_up(std::size_t i, double t) const {
  const PeerSpec& p = peers.at(i);
  if (p.join_s && t < *p.join_s) return false;
  if (p.leave_s && t >= *p.leave_s) return false;
  return churn.is_up(p.name, t);
}

std::pair<double, double> Scenario::peer_bandwidth(std::size_t i, double t) const {
  const PeerSpec& p = peers.at(i);
  if (const auto* row = bandwidth.at(p.name, t)) return {row->download_bps, row->upload_bps};
  return {p.download_bps, p.upload_bps};
}

}  // namespace swarmlab::scenarios
