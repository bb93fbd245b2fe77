#include "sim/network/ns3/ns3_network.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>

#include "sim/network/ns3/ns3_clock.h"
#include "sim/network/ns3/star_topology.h"
#include "sim/network/ns3/tcp_socket_access.h"
#include "sim/network/ns3/tcp_stream.h"

namespace swarmlab::sim {
namespace {

constexpr std::uint16_t kPort = 7000;  // every peer listens here
constexpr double kMinBufferBytes = 4 << 20;
constexpr double kMaxBufferBytes = 1u << 30;

void check_rate(double bps, const char* what) {
  if (!(bps >= 0)) throw std::invalid_argument(std::string("ns3 network: ") + what + " must be >= 0 bits/s");
}

}  // namespace

class Ns3Network::Impl {
 public:
  Impl(Engine& engine, std::vector<LinkSpec> links, Ns3Options options)
      : engine_(engine),
        options_(std::move(options)),
        links_(std::move(links)),
        clock_(engine, [this] { return ctx_.outstanding > 0; }),
        ctx_{clock_},
        up_(links_.size(), true) {
    // Logging stays off whatever NS_LOG says: it would dominate the run time.
    ns3::LogComponentDisableAll(ns3::LOG_LEVEL_ALL);
    for (const auto& l : links_) {
      check_rate(l.upload_bps, "upload");
      check_rate(l.download_bps, "download");
    }
    topology_ = std::make_unique<StarTopology>(links_, options_);
    if (!ns3::TypeId::LookupByNameFailSafe(options_.congestion_control, &congestion_))
      throw std::invalid_argument("ns3 network: unknown congestion control " + options_.congestion_control);
    buffer_bytes_ = buffer_bytes();
    ctx_.on_broken = [this](TcpStream& s) { retire(s); };
    ctx_.base_rtt = [this](PeerId a, PeerId b) { return std::max(1e-3, 2 * path_latency(a, b)); };
    ctx_.initial_sndbuf = buffer_bytes_;
    if (options_.autotune_buffers) {
      // Linux starts at tcp_wmem's default (16 KiB); here never below two initial windows.
      const std::uint64_t initial_window =
          std::uint64_t{options_.initial_cwnd_segments} * topology_->segment_bytes();
      ctx_.initial_sndbuf = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(buffer_bytes_, std::max<std::uint64_t>(128u << 10, 2 * initial_window)));
      ctx_.max_sndbuf = buffer_bytes_;
    }
    for (PeerId p = 0; p < links_.size(); ++p) {
      ns3::Ptr<ns3::Node> node = topology_->node(p);
      ns3::Ptr<ns3::TcpL4Protocol> tcp = node->GetObject<ns3::TcpL4Protocol>();
      tcp->SetAttribute("SocketType", ns3::TypeIdValue(congestion_));
      tcp->SetAttribute("RecoveryType", ns3::TypeIdValue(ns3::TypeId::LookupByName("ns3::TcpPrrRecovery")));
      ns3::Ptr<ns3::Socket> listener = ns3::Socket::CreateSocket(node, ns3::TcpSocketFactory::GetTypeId());
      configure(*listener);  // accepted sockets inherit the listener's settings
      listener->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), kPort));
      listener->Listen();
      listener->SetAcceptCallback(ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
                                  ns3::MakeCallback(&Impl::on_accept, this));
      listeners_.push_back(listener);
    }
    // ns-3 initialises nodes and queue discs in events at time 0; run them before the first send.
    clock_.run_until(clock_.now());
  }

  ~Impl() {
    // Streams detach their callbacks before ns-3 tears the nodes down (the clock goes last).
    streams_.clear();
    retired_.clear();
    for (auto& l : listeners_)
      l->SetAcceptCallback(ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
                           ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, const ns3::Address&>());
  }

  void transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) {
    check_peer(from);
    check_peer(to);
    retired_.clear();  // safe here: no ns-3 callback is on the stack
    if (!up_[from] || !up_[to]) {
      // The connection attempt fails after the time it takes to notice, as on the flow backend.
      const Seconds now = engine_.now();
      engine_.after(path_latency(from, to), [done = std::move(done), now, this] {
        done(TransferOutcome{false, now, engine_.now()});
      });
      return;
    }
    if (from == to) {  // loopback: no access link is crossed
      engine_.after(0, [this, bytes, done = std::move(done), now = engine_.now()] {
        ctx_.bytes_delivered += bytes;
        done(TransferOutcome{true, now, now});
      });
      return;
    }
    stream_for(from, to).enqueue(bytes, std::move(done));
  }

  void set_peer_up(PeerId peer, bool up) {
    check_peer(peer);
    if (up_[peer] == up) return;
    up_[peer] = up;
    if (up) return;
    // Its process died: every connection from or to it breaks, noticed one path latency later.
    std::vector<TcpStream*> affected;
    for (auto& [key, s] : streams_)
      if (s->from() == peer || s->to() == peer) affected.push_back(s.get());
    for (TcpStream* s : affected) {
      s->fail(path_latency(s->from(), s->to()));
      retire(*s);
    }
  }

  void set_capacity(PeerId peer, double download_bps, double upload_bps) {
    check_peer(peer);
    check_rate(download_bps, "download");
    check_rate(upload_bps, "upload");
    links_[peer].download_bps = download_bps;
    links_[peer].upload_bps = upload_bps;
    topology_->set_rates(peer, download_bps, upload_bps);
  }

  void set_pair_limit(std::map<std::pair<PeerId, PeerId>, double>& table, PeerId from, PeerId to, double bps) {
    check_peer(from);
    check_peer(to);
    check_rate(bps, "pair rate limit");
    table[{from, to}] = bps;
    if (auto it = streams_.find({from, to}); it != streams_.end()) it->second->set_rate_limit(rate_limit(from, to));
  }

  Engine& engine_;
  Ns3Options options_;
  std::vector<LinkSpec> links_;
  Ns3Clock clock_;  // declared before every ns-3 object, so Simulator::Destroy runs after they are gone
  StreamContext ctx_;
  std::unique_ptr<StarTopology> topology_;
  ns3::TypeId congestion_;
  std::uint32_t buffer_bytes_ = 0;
  std::vector<bool> up_;
  std::vector<ns3::Ptr<ns3::Socket>> listeners_;
  // Ordered maps: iteration order (and so event order) never depends on hashing.
  std::map<std::pair<PeerId, PeerId>, std::unique_ptr<TcpStream>> streams_;
  std::map<std::pair<PeerId, std::uint16_t>, TcpStream*> by_port_;  // sender peer, local port
  std::vector<std::unique_ptr<TcpStream>> retired_;  // broken; freed when no callback can be running
  std::map<std::pair<PeerId, PeerId>, double> pair_caps_, pacing_;
  std::uint64_t connections_ = 0;

 private:
  void check_peer(PeerId p) const {
    if (p >= links_.size()) throw std::out_of_range("ns3 network: unknown peer " + std::to_string(p));
  }
  Seconds path_latency(PeerId from, PeerId to) const { return links_[from].latency_s + links_[to].latency_s; }

  std::uint32_t buffer_bytes() const {
    if (options_.socket_buffer_bytes > 0)
      return static_cast<std::uint32_t>(std::min<std::uint64_t>(options_.socket_buffer_bytes, 0xFFFFFFFFu));
    double rate = 0, latency = 0;
    for (const auto& l : links_) {
      if (std::isfinite(l.upload_bps)) rate = std::max(rate, l.upload_bps);
      if (std::isfinite(l.download_bps)) rate = std::max(rate, l.download_bps);
      latency = std::max(latency, l.latency_s);
    }
    const double bdp = rate * topology_->wire_factor() * 4 * latency / 8;  // longest base RTT: 4 access links
    return static_cast<std::uint32_t>(std::clamp(4 * bdp, kMinBufferBytes, kMaxBufferBytes));
  }

  void configure(ns3::Socket& s) const {
    s.SetAttribute("SegmentSize", ns3::UintegerValue(topology_->segment_bytes()));
    s.SetAttribute("InitialCwnd", ns3::UintegerValue(options_.initial_cwnd_segments));
    s.SetAttribute("SndBufSize", ns3::UintegerValue(ctx_.initial_sndbuf));
    s.SetAttribute("RcvBufSize", ns3::UintegerValue(buffer_bytes_));
    s.SetAttribute("DelAckTimeout", ns3::TimeValue(ns3::Seconds(options_.delayed_ack_timeout_s)));
    const double min_rto = options_.min_rto_s > 0 ? options_.min_rto_s : options_.queue_disc == "fq" ? 3.0 : 0.2;
    s.SetAttribute("MinRto", ns3::TimeValue(ns3::Seconds(min_rto)));
  }

  double rate_limit(PeerId from, PeerId to) const {
    double limit = kUnlimited;
    if (auto it = pair_caps_.find({from, to}); it != pair_caps_.end()) limit = std::min(limit, it->second);
    if (auto it = pacing_.find({from, to}); it != pacing_.end()) limit = std::min(limit, it->second);
    return limit;
  }

  TcpStream& stream_for(PeerId from, PeerId to) {
    auto it = streams_.find({from, to});
    if (it != streams_.end()) return *it->second;
    ns3::Ptr<ns3::Socket> socket = ns3::Socket::CreateSocket(topology_->node(from), ns3::TcpSocketFactory::GetTypeId());
    configure(*socket);
    socket->Bind();
    socket->Connect(ns3::InetSocketAddress(topology_->address(to), kPort));
    auto stream = std::make_unique<TcpStream>(ctx_, from, to, ns3::DynamicCast<ns3::TcpSocketBase>(socket),
                                               topology_->segment_bytes());
    const double limit = rate_limit(from, to);
    if (std::isfinite(limit)) stream->set_rate_limit(limit);
    by_port_[{from, stream->local_port()}] = stream.get();
    ++connections_;
    return *streams_.emplace(std::make_pair(from, to), std::move(stream)).first->second;
  }

  void on_accept(ns3::Ptr<ns3::Socket> socket, const ns3::Address& from) {
    const ns3::InetSocketAddress remote = ns3::InetSocketAddress::ConvertFrom(from);
    const std::optional<PeerId> sender = topology_->peer_of(remote.GetIpv4());
    auto it = sender ? by_port_.find({*sender, remote.GetPort()}) : by_port_.end();
    if (it == by_port_.end()) {
      // A late handshake of a connection already torn down: nobody reads it.
      TcpSocketAccess::abort(*ns3::DynamicCast<ns3::TcpSocketBase>(socket));
      return;
    }
    it->second->attach_receiver(socket);
  }

  // Takes a broken stream out of service; a later transmit on its pair opens a new connection.
  void retire(TcpStream& s) {
    by_port_.erase({s.from(), s.local_port()});
    auto it = streams_.find({s.from(), s.to()});
    if (it == streams_.end() || it->second.get() != &s) return;
    retired_.push_back(std::move(it->second));
    streams_.erase(it);
  }
};

Ns3Network::Ns3Network(Engine& engine, std::vector<LinkSpec> links, Ns3Options options)
    : impl_(std::make_unique<Impl>(engine, std::move(links), std::move(options))) {}

Ns3Network::~Ns3Network() = default;

void Ns3Network::transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) {
  impl_->transmit(from, to, bytes, std::move(done));
}
void Ns3Network::set_peer_up(PeerId peer, bool up) { impl_->set_peer_up(peer, up); }
void Ns3Network::set_capacity(PeerId peer, double download_bps, double upload_bps) {
  impl_->set_capacity(peer, download_bps, upload_bps);
}
void Ns3Network::set_pair_cap(PeerId from, PeerId to, double bps) {
  impl_->set_pair_limit(impl_->pair_caps_, from, to, bps);
}
void Ns3Network::set_pacing(PeerId from, PeerId to, double bps) {
  impl_->set_pair_limit(impl_->pacing_, from, to, bps);
}
std::uint64_t Ns3Network::bytes_delivered() const { return impl_->ctx_.bytes_delivered; }
std::uint64_t Ns3Network::ns3_events() const { return impl_->clock_.events(); }
std::uint64_t Ns3Network::packets_dropped() const { return impl_->topology_->drops(); }
std::uint64_t Ns3Network::connections_opened() const { return impl_->connections_; }
double Ns3Network::wire_rate_factor() const { return impl_->topology_->wire_factor(); }
const Ns3Options& Ns3Network::options() const { return impl_->options_; }

std::unique_ptr<Network> make_ns3_network(Engine& engine, std::vector<LinkSpec> links, Ns3Options options) {
  return std::make_unique<Ns3Network>(engine, std::move(links), std::move(options));
}

}  // namespace swarmlab::sim
