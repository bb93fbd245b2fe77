#pragma once
// Packet-level network backend: every peer is an ns-3 node behind its own access link, and
// messages travel over real ns-3 TCP connections (one per ordered pair of peers). Configuration,
// co-simulation and fidelity choices are explained in sim/network/ns3/README.md.
//
// This header is the C++17/C++20 boundary: it includes no ns-3 header, so the C++20 parts of the
// simulator can create the backend while everything that touches ns-3 builds as C++17.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine.h"
#include "sim/network/network.h"

namespace swarmlab::sim {

struct Ns3Options {
  // IP MTU of every link. The default is the size of what Linux hands a NIC with segmentation
  // offload (a 64 KB GSO/TSO super-packet): one ns-3 packet then stands for ~45 Ethernet frames,
  // which is what makes a Table 1 run take a minute rather than hours (ns-3's TCP costs grow with
  // the number of segments in flight, so per-frame 1500 costs ~45^2 more). 1500 gives per-frame
  // fidelity. A full segment carries MTU - 52 bytes of payload (IPv4 20, TCP 20, timestamps 12).
  std::uint32_t mtu_bytes = 65000;
  // ns-3 TypeId of the congestion control (Linux's default, CUBIC with HyStart).
  std::string congestion_control = "ns3::TcpCubic";
  std::uint32_t initial_cwnd_segments = 10;  // RFC 6928, Linux (in segments of this MTU)
  // Minimum retransmission timeout; 0 = auto: Linux's 0.2 s where queues drop (drop_tail), 3 s
  // (RFC 2988's initial RTO) in the lossless fq network, where every timeout would be spurious
  // (queueing delay outgrew the RTT estimate): Linux undoes those (F-RTO, RFC 5682), ns-3 3.37
  // cannot and would collapse the window for nothing.
  double min_rto_s = 0;
  double delayed_ack_timeout_s = 0.04;  // Linux's TCP_DELACK_MIN (ns-3 defaults to 0.2 s)
  // Ceiling of the send and receive buffers per socket in bytes; 0 = auto: 4 x the largest
  // bandwidth-delay product in the network, at least 4 MiB, so one flow can fill any link.
  std::uint64_t socket_buffer_bytes = 0;
  // Send buffers (and so windows) grow with what the connection actually delivers, as Linux's
  // buffer autotuning does: start at two initial windows (at least 128 KiB), then twice the bytes
  // delivered per base round trip. Off: every window may reach the full buffer, and flows that
  // never lose a packet fill the queues on their path up to it.
  bool autotune_buffers = true;
  // Queueing at every device. "fq": per-flow fair queueing (ns-3's FqCoDel with its CoDel AQM
  // switched off and exact flow classification), as Linux's fq/fq_codel on hosts and FQ-capable
  // access routers provide, with room for every window so nothing is dropped: each bottleneck
  // divides its rate max-min fairly among the connections that have data, which is the fluid
  // model's assumption. "drop_tail": FIFO device queues of queue_s, where losses, incast and TCP
  // recovery happen.
  std::string queue_disc = "fq";
  // drop_tail only: device queue in seconds of the device's rate; 0 = auto: one base round trip of
  // the network's longest path (the one-BDP rule of thumb), at least 5 ms.
  double queue_s = 0;
  // LinkSpec rates are application goodput for every backend. When set, the backend raises each
  // device's wire rate by its framing (wire bytes per full-size segment over its payload), so one
  // long flow delivers the LinkSpec rate; headers are then modelled, not double-counted.
  bool compensate_framing = true;
};

class Ns3Network final : public Network {
 public:
  // Only one Ns3Network may exist at a time in a process: ns-3's simulator is a global singleton.
  // It is created here and destroyed (Simulator::Destroy) with the network, so sequential runs in
  // one process are independent. Attaches itself to `engine` as its external event source.
  Ns3Network(Engine& engine, std::vector<LinkSpec> links, Ns3Options options = {});
  ~Ns3Network() override;
  Ns3Network(const Ns3Network&) = delete;
  Ns3Network& operator=(const Ns3Network&) = delete;

  std::string_view name() const override { return "ns3"; }
  void transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) override;
  void set_peer_up(PeerId peer, bool up) override;
  void set_capacity(PeerId peer, double download_bps, double upload_bps) override;
  void set_pair_cap(PeerId from, PeerId to, double bps) override;
  void set_pacing(PeerId from, PeerId to, double bps) override;
  std::uint64_t bytes_delivered() const override;

  // Inspection for tests and benchmarks.
  std::uint64_t ns3_events() const;        // ns-3 events processed so far
  std::uint64_t packets_dropped() const;   // drop-tail losses at every device queue
  std::uint64_t connections_opened() const;
  double wire_rate_factor() const;         // wire rate / LinkSpec rate of every device
  const Ns3Options& options() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Plain factory for sim/network/backend.cc.
std::unique_ptr<Network> make_ns3_network(Engine& engine, std::vector<LinkSpec> links, Ns3Options options = {});

}  // namespace swarmlab::sim
