#include "sim/network/ns3/star_topology.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace swarmlab::sim {
namespace {

// Bytes a full-size TCP segment adds around its payload: IPv4 20 + TCP 20 + timestamp option 12
// (the MSS), plus the 2-byte PPP header of a point-to-point device (the wire).
constexpr std::uint32_t kIpTcpHeaderBytes = 52;
constexpr std::uint32_t kPppHeaderBytes = 2;
// Addresses: peer p owns 10.0.0.0/8 + 4p + 1; its link is the /30 holding it and the router's side.
constexpr std::uint32_t kBase = 0x0A000000u;
constexpr std::uint32_t kMaxPeers = 1u << 22;
// ns-3's point-to-point device divides by its rate; a link with no capacity is approximated by
// this trickle (a bandwidth trace's 0 then means "barely anything gets through").
constexpr double kMinWireBps = 1e3;
// fq: hash buckets for flow classification. FqCoDel hashes flows into buckets; two flows sharing a
// bucket share one queue and each gets half a fair share (Linux's sch_fq has no such collisions).
// With 2^24 buckets a collision among a few thousand flows per device is improbable.
constexpr std::uint32_t kFlowBuckets = 1u << 24;
// fq: CoDel switched off (it would only act on sojourn times beyond this), and a packet limit no
// window in this network reaches.
constexpr const char* kCoDelOff = "1000s";
constexpr const char* kFqLimit = "1000000p";

}  // namespace

StarTopology::StarTopology(const std::vector<LinkSpec>& links, const Ns3Options& options) : mtu_(options.mtu_bytes) {
  if (links.size() >= kMaxPeers) throw std::invalid_argument("ns3 backend: too many peers");
  if (mtu_ < 576 || mtu_ > 65535) throw std::invalid_argument("ns3 backend: MTU must be in 576..65535 bytes");
  if (options.queue_disc != "fq" && options.queue_disc != "drop_tail")
    throw std::invalid_argument("ns3 backend: queue_disc must be \"fq\" or \"drop_tail\"");
  fair_queueing_ = options.queue_disc == "fq";
  segment_bytes_ = mtu_ - kIpTcpHeaderBytes;
  wire_factor_ = options.compensate_framing
                     ? static_cast<double>(mtu_ + kPppHeaderBytes) / static_cast<double>(segment_bytes_)
                     : 1.0;
  Seconds max_latency = 0;
  for (const auto& l : links) {
    if (!(l.latency_s >= 0)) throw std::invalid_argument("ns3 backend: latency must be >= 0");
    if (!(l.upload_bps >= 0) || !(l.download_bps >= 0))
      throw std::invalid_argument("ns3 backend: rates must be >= 0 bits/s");
    max_latency = std::max(max_latency, l.latency_s);
  }
  // One base RTT of the longest path (2 x two access links): the bandwidth-delay rule of thumb.
  queue_s_ = options.queue_s > 0 ? options.queue_s : std::max(0.005, 4 * max_latency);

  ns3::InternetStackHelper stack;
  stack.SetIpv6StackInstall(false);
  stack.SetRoutingHelper(ns3::Ipv4StaticRoutingHelper());  // the star needs no routing protocol
  router_ = ns3::CreateObject<ns3::Node>();
  stack.Install(router_);
  ns3::Ptr<ns3::Ipv4> router_ip = router_->GetObject<ns3::Ipv4>();

  ns3::PointToPointHelper p2p;
  p2p.SetDeviceAttribute("Mtu", ns3::UintegerValue(mtu_));
  // drop_tail: the device queue is the queue; no flow control, so no per-packet queue callbacks.
  if (!fair_queueing_) p2p.DisableFlowControl();
  ns3::TrafficControlHelper fq;
  fq.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "MaxSize", ns3::QueueSizeValue(ns3::QueueSize(kFqLimit)),
                      "Flows", ns3::UintegerValue(kFlowBuckets), "Target", ns3::StringValue(kCoDelOff),
                      "Interval", ns3::StringValue(kCoDelOff));
  ns3::Ipv4StaticRoutingHelper routing;
  const ns3::Ipv4Mask mask("255.255.255.252");
  peers_.resize(links.size());
  for (PeerId p = 0; p < links.size(); ++p) {
    Peer& peer = peers_[p];
    peer.node = ns3::CreateObject<ns3::Node>();
    stack.Install(peer.node);
    p2p.SetChannelAttribute("Delay", ns3::TimeValue(ns3::NanoSeconds(std::llround(links[p].latency_s * 1e9))));
    ns3::NetDeviceContainer devices = p2p.Install(peer.node, router_);
    peer.up = ns3::DynamicCast<ns3::PointToPointNetDevice>(devices.Get(0));
    peer.down = ns3::DynamicCast<ns3::PointToPointNetDevice>(devices.Get(1));
    if (fair_queueing_) peer.discs = fq.Install(devices);

    // Addresses by hand: Ipv4AddressHelper would also install its default queue disc.
    peer.address = ns3::Ipv4Address(kBase + 4 * p + 1);
    const ns3::Ipv4Address router_side(kBase + 4 * p + 2);
    ns3::Ptr<ns3::Ipv4> ip = peer.node->GetObject<ns3::Ipv4>();
    const std::int32_t ifc = ip->AddInterface(peer.up);
    ip->AddAddress(ifc, ns3::Ipv4InterfaceAddress(peer.address, mask));
    ip->SetUp(ifc);
    const std::int32_t rifc = router_ip->AddInterface(peer.down);
    router_ip->AddAddress(rifc, ns3::Ipv4InterfaceAddress(router_side, mask));
    router_ip->SetUp(rifc);
    routing.GetStaticRouting(ip)->SetDefaultRoute(router_side, ifc);
    set_rates(p, links[p].download_bps, links[p].upload_bps);
  }
}

std::optional<PeerId> StarTopology::peer_of(ns3::Ipv4Address address) const {
  const std::uint32_t a = address.Get();
  if (a < kBase || ((a - kBase) & 3u) != 1u) return std::nullopt;
  const std::uint32_t p = (a - kBase) / 4;
  if (p >= peers_.size()) return std::nullopt;
  return p;
}

void StarTopology::configure(ns3::PointToPointNetDevice& device, double goodput_bps) {
  const double wire = std::max(kMinWireBps, goodput_bps * wire_factor_);
  device.SetDataRate(ns3::DataRate(static_cast<std::uint64_t>(std::llround(std::min(wire, 1e15)))));
  ns3::Ptr<ns3::Queue<ns3::Packet>> queue = device.GetQueue();
  if (fair_queueing_) {
    // The queue disc holds the backlog; the device only a few packets (as Linux's BQL keeps it).
    queue->SetMaxSize(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, std::max<std::uint32_t>(3, queue->GetNPackets())));
    return;
  }
  // Room for queue_s of traffic at this rate, at least a few full packets. ns-3 refuses a limit
  // below what the queue holds now; it then drains down to the new limit instead.
  double bytes = std::max(4.0 * (mtu_ + kPppHeaderBytes), wire * queue_s_ / 8);
  bytes = std::max(bytes, static_cast<double>(queue->GetNBytes()));
  queue->SetMaxSize(ns3::QueueSize(ns3::QueueSizeUnit::BYTES, static_cast<std::uint32_t>(std::min(bytes, 4e9))));
}

std::uint64_t StarTopology::drops() const {
  std::uint64_t n = 0;
  for (const Peer& p : peers_) {
    n += p.up->GetQueue()->GetTotalDroppedPackets() + p.down->GetQueue()->GetTotalDroppedPackets();
    for (std::size_t i = 0; i < p.discs.GetN(); ++i) n += p.discs.Get(i)->GetStats().nTotalDroppedPackets;
  }
  return n;
}

void StarTopology::set_rates(PeerId p, double download_bps, double upload_bps) {
  if (!(upload_bps >= 0) || !(download_bps >= 0)) throw std::invalid_argument("ns3 backend: rates must be >= 0 bits/s");
  configure(*peers_[p].up, upload_bps);
  configure(*peers_[p].down, download_bps);
}

}  // namespace swarmlab::sim
