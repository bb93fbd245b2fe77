#pragma once
// The ns-3 network of the backend: every peer is a node with one point-to-point access link to a
// single core router. The peer's device sends at the peer's upload rate and the router's device
// toward the peer at its download rate, so a peer's upload and download are the only bottlenecks,
// as in the fluid model; the router forwards instantly and adds none of its own. Each access link's
// propagation delay is the peer's one-way latency, so a path's delay is the sum of both ends'.
#include <cstdint>
#include <optional>
#include <vector>

#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

#include "sim/network/network.h"
#include "sim/network/ns3/ns3_network.h"

namespace swarmlab::sim {

class StarTopology {
 public:
  StarTopology(const std::vector<LinkSpec>& links, const Ns3Options& options);

  std::size_t size() const { return peers_.size(); }
  ns3::Ptr<ns3::Node> node(PeerId p) const { return peers_[p].node; }
  ns3::Ipv4Address address(PeerId p) const { return peers_[p].address; }
  // The peer whose access link holds `address`, if any.
  std::optional<PeerId> peer_of(ns3::Ipv4Address address) const;

  // Sets a peer's rates (goodput, bits/s, as in LinkSpec); drop-tail queues follow the rate.
  void set_rates(PeerId p, double download_bps, double upload_bps);

  std::uint32_t segment_bytes() const { return segment_bytes_; }  // TCP payload per full segment
  double wire_factor() const { return wire_factor_; }             // wire rate per goodput rate
  std::uint64_t drops() const;  // packets dropped by every queue so far

 private:
  struct Peer {
    ns3::Ptr<ns3::Node> node;
    ns3::Ptr<ns3::PointToPointNetDevice> up;    // on the peer: its upload
    ns3::Ptr<ns3::PointToPointNetDevice> down;  // on the router: the peer's download
    ns3::QueueDiscContainer discs;              // fq only
    ns3::Ipv4Address address;
  };
  void configure(ns3::PointToPointNetDevice& device, double goodput_bps);

  std::uint32_t mtu_;
  std::uint32_t segment_bytes_;
  double wire_factor_;
  bool fair_queueing_;
  Seconds queue_s_ = 0;  // drop_tail only
  ns3::Ptr<ns3::Node> router_;
  std::vector<Peer> peers_;
};

}  // namespace swarmlab::sim
