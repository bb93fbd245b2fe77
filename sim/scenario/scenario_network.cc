#include "sim/scenario/scenario_network.h"

#include "core/codec/codec.h"
#include "scenarios/nat_traversal.h"
#include "sim/network/backend.h"

namespace swarmlab::sim {

core::planner::PlannerInput planner_input(const scenarios::Scenario& sc, const TransportAssumptions& transport) {
  core::planner::PlannerInput in;
  for (std::size_t i = 0; i < sc.peers.size(); ++i) in.peers.push_back(peer_capacity(sc, i, 0, transport));
  const double g = transport.goodput_fraction;
  if (!sc.pair_caps.empty()) {
    in.pair_caps.assign(sc.peers.size(), std::vector<double>(sc.peers.size(), kUnlimited));
    for (const auto& cap : sc.pair_caps) in.pair_caps[cap.from][cap.to] = cap.bps * g;
  }
  if (sc.nat_traversal) {
    std::vector<core::PeerId> everyone(sc.peers.size());
    for (std::size_t i = 0; i < everyone.size(); ++i) everyone[i] = static_cast<core::PeerId>(i);
    core::relay::Reachability(scenarios::reachability_config(sc)).add_routes(in, everyone);
  }
  in.target_batch = static_cast<double>(sc.workload.target_batch);
  in.gradient_bits = 8.0 * static_cast<double>(core::codec::encoded_size(sc.workload.wire_precision, sc.workload.parameters));
  return in;
}

core::planner::PeerCapacity peer_capacity(const scenarios::Scenario& sc, std::size_t i, double t,
                                          const TransportAssumptions& transport) {
  const auto& p = sc.peers.at(i);
  const auto [down, up] = sc.peer_bandwidth(i, t);
  const double g = transport.goodput_fraction;
  return {p.compute_sps, down * g, up * g, p.reachability == scenarios::Reachability::Client};
}

std::unique_ptr<Network> make_scenario_network(const scenarios::Scenario& sc, const TransportAssumptions& transport,
                                               const std::string& backend, Engine& engine) {
  const double g = transport.goodput_fraction;
  std::vector<LinkSpec> links;
  for (const auto& p : sc.peers) links.push_back({p.download_bps * g, p.upload_bps * g, p.latency_s});
  auto network = make_network(backend, engine, std::move(links));
  for (const auto& cap : sc.pair_caps)
    network->set_pair_cap(static_cast<PeerId>(cap.from), static_cast<PeerId>(cap.to), cap.bps * g);
  Network* net = network.get();
  for (const auto& e : sc.bandwidth.events) {
    const auto peer = static_cast<PeerId>(*sc.find_peer(e.peer));
    engine.at(e.time_s, [net, peer, down = e.download_bps * g, up = e.upload_bps * g] { net->set_capacity(peer, down, up); });
  }
  return network;
}

}  // namespace swarmlab::sim
