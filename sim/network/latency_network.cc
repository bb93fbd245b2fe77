#include "sim/network/latency_network.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace swarmlab::sim {
namespace {


}  // namespace

LatencyNetwork::LatencyNetwork(Engine& engine, std::vector<LinkSpec> links)
    : engine_(engine),
      links_(std::move(links)),
      up_(links_.size(), true),
      out_head_(links_.size(), kNone),
      in_head_(links_.size(), kNone) {
  for (const LinkSpec& l : links_) {
    check_link_rate(l.upload_bps, "latency network", "upload");
    check_link_rate(l.download_bps, "latency network", "download");
    if (!(l.latency_s >= 0)) throw std::invalid_argument("latency network: latency must be >= 0");
  }
}

void LatencyNetwork::check_peer(PeerId p) const {
  if (p >= links_.size()) throw std::out_of_range("latency network: unknown peer " + std::to_string(p));
}

LatencyNetwork::Index LatencyNetwork::allocate() {
  if (!free_.empty()) {
    const Index t = free_.back();
    free_.pop_back();
    return t;
  }
  transfers_.emplace_back();
  return static_cast<Index>(transfers_.size() - 1);
}

void LatencyNetwork::link(Index t) {
  Transfer& x = transfers_[t];
  x.prev_out = kNone;
  x.next_out = out_head_[x.from];
  if (x.next_out != kNone) transfers_[x.next_out].prev_out = t;
  out_head_[x.from] = t;
  x.prev_in = kNone;
  x.next_in = in_head_[x.to];
  if (x.next_in != kNone) transfers_[x.next_in].prev_in = t;
  in_head_[x.to] = t;
  ++in_flight_;
}

void LatencyNetwork::unlink(Index t) {
  Transfer& x = transfers_[t];
  if (x.prev_out != kNone) transfers_[x.prev_out].next_out = x.next_out; else out_head_[x.from] = x.next_out;
  if (x.next_out != kNone) transfers_[x.next_out].prev_out = x.prev_out;
  if (x.prev_in != kNone) transfers_[x.prev_in].next_in = x.next_in; else in_head_[x.to] = x.next_in;
  if (x.next_in != kNone) transfers_[x.next_in].prev_in = x.prev_in;
  --in_flight_;
  auto it = pairs_.find(pair_key(x.from, x.to));
  if (it != pairs_.end() && --it->second.in_flight == 0) pairs_.erase(it);
}

void LatencyNetwork::release(Index t) {
  transfers_[t].done = nullptr;
  free_.push_back(t);
}

void LatencyNetwork::fail_later(Seconds delay, Seconds started, Done done) {
  engine_.after(delay, [this, started, done = std::move(done)] { done(TransferOutcome{false, started, engine_.now()}); });
}

void LatencyNetwork::set_packet_loss(double p, std::uint64_t seed) {
  if (!(p >= 0 && p < 1)) throw std::invalid_argument("latency network: packet loss must be in [0, 1)");
  loss_ = p;
  loss_rng_ = core::Rng(seed, 0x1055);
}

void LatencyNetwork::transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) {
  check_peer(from);
  check_peer(to);
  const Seconds now = engine_.now();
  if (!up_[from] || !up_[to]) {
    // The connection attempt fails after the time it takes to notice.
    fail_later(path_latency(from, to), now, std::move(done));
    return;
  }
  double rate = std::min(links_[from].upload_bps, links_[to].download_bps);
  if (!pair_caps_.empty())
    if (auto it = pair_caps_.find(pair_key(from, to)); it != pair_caps_.end()) rate = std::min(rate, it->second);
  if (!pacing_.empty())
    if (auto it = pacing_.find(pair_key(from, to)); it != pacing_.end()) rate = std::min(rate, it->second);
  Seconds retransmission = 0;
  if (loss_ > 0) {
    const Seconds rtt = 2 * path_latency(from, to);
    const double packets = std::max(1.0, std::ceil(static_cast<double>(bytes) / kSegmentBytes));
    if (packets > kShortTransferPackets) {
      if (rtt > 0) rate = std::min(rate, 8.0 * kSegmentBytes / rtt * 1.22 / std::sqrt(loss_));
    } else if (loss_rng_.bernoulli(1 - std::pow(1 - loss_, packets))) {
      retransmission = std::max(0.2, 2 * rtt);
    }
  }
  const Seconds serialise = bytes == 0 ? 0.0 : 8.0 * static_cast<double>(bytes) / rate;  // inf when rate is 0

  Pair& pair = pairs_[pair_key(from, to)];
  const Seconds start = std::max(now, pair.busy_until);
  pair.busy_until = start + serialise + retransmission;
  ++pair.in_flight;

  const Index t = allocate();
  Transfer& x = transfers_[t];
  x.from = from;
  x.to = to;
  x.bytes = bytes;
  x.started = start;
  x.done = std::move(done);
  link(t);
  // A transfer over a zero-rate link never arrives; it stays in flight until an end goes down.
  x.event = std::isinf(pair.busy_until) ? 0 : engine_.at(pair.busy_until + path_latency(from, to), [this, t] { arrive(t); });
}

void LatencyNetwork::arrive(Index t) {
  Transfer& x = transfers_[t];
  Done done = std::move(x.done);
  const TransferOutcome outcome{true, x.started, engine_.now()};
  bytes_delivered_ += x.bytes;
  unlink(t);
  release(t);
  done(outcome);
}

void LatencyNetwork::set_peer_up(PeerId peer, bool up) {
  check_peer(peer);
  if (up_[peer] == up) return;
  up_[peer] = up;
  if (up) return;
  for (Index* head : {&out_head_[peer], &in_head_[peer]}) {
    while (*head != kNone) {
      const Index t = *head;
      Transfer& x = transfers_[t];
      engine_.cancel(x.event);
      Done done = std::move(x.done);
      const Seconds started = x.started;
      const Seconds notice = path_latency(x.from, x.to);
      unlink(t);
      release(t);
      fail_later(notice, started, std::move(done));
    }
  }
}

void LatencyNetwork::set_capacity(PeerId peer, double download_bps, double upload_bps) {
  check_peer(peer);
  check_link_rate(download_bps, "latency network", "download");
  check_link_rate(upload_bps, "latency network", "upload");
  links_[peer].download_bps = download_bps;
  links_[peer].upload_bps = upload_bps;
}

void LatencyNetwork::set_pair_cap(PeerId from, PeerId to, double bps) {
  check_peer(from);
  check_peer(to);
  check_link_rate(bps, "latency network", "pair cap");
  if (bps == kUnlimited)
    pair_caps_.erase(pair_key(from, to));
  else
    pair_caps_[pair_key(from, to)] = bps;
}

void LatencyNetwork::set_pacing(PeerId from, PeerId to, double bps) {
  check_peer(from);
  check_peer(to);
  check_link_rate(bps, "latency network", "pacing rate");
  if (bps == kUnlimited)
    pacing_.erase(pair_key(from, to));
  else
    pacing_[pair_key(from, to)] = bps;
}

}  // namespace swarmlab::sim
