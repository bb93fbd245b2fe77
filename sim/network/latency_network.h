#pragma once
// A network model for message-heavy, byte-light workloads such as DHT traffic among thousands of
// peers. A transfer of b bytes from s to r arrives
//
//   latency(s) + latency(r) + 8b / min(upload(s), download(r), pair cap)
//
// after it starts, and it starts when the previous transfer on the same ordered pair has finished
// serialising (one FIFO stream per pair, as with TCP), so messages on a pair arrive in order.
//
// Unlike the fluid model (flow_network.h), transfers do not share bandwidth: each one sees its
// endpoints' full rates. That is acceptable when messages are small: a DHT message is tens to a
// few hundred bytes, so its serialisation time (tens of microseconds at 10 Mbit/s) is negligible
// next to the 20–200 ms of latency, and a peer sends a few messages per second, far from
// saturating its link. It is the wrong model for bulk transfers; use the fluid model for those.
// In exchange each message costs O(1) work plus one event in the engine's O(log n) heap.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/rng.h"
#include "sim/engine.h"
#include "sim/network/network.h"

namespace swarmlab::sim {

class LatencyNetwork final : public Network {
 public:
  LatencyNetwork(Engine& engine, std::vector<LinkSpec> links);

  std::string_view name() const override { return "latency"; }
  void transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) override;
  // Going down fails every transfer in flight from or to the peer; each sender and receiver
  // learns of it one path latency later, as in the fluid model.
  void set_peer_up(PeerId peer, bool up) override;
  // Applies to transfers started afterwards; those in flight keep their arrival time.
  void set_capacity(PeerId peer, double download_bps, double upload_bps) override;
  void set_pair_cap(PeerId from, PeerId to, double bps) override;
  // Pacing is one more cap on the pair's rate (for transfers started afterwards).
  void set_pacing(PeerId from, PeerId to, double bps) override;
  std::uint64_t bytes_delivered() const override { return bytes_delivered_; }

  // Packet loss on every path, as TCP sees it: nothing is lost, it is late (docs/learning-at-home.md
  // §8). A transfer of more than kShortTransferPackets packets is capped at the rate TCP sustains
  // under loss p over its round trip (Mathis et al. 1997: MSS / RTT · 1.22 / √p), its losses
  // recovered by fast retransmit. A shorter one has too few packets behind a loss to trigger fast
  // retransmit: with probability 1 − (1 − p)^packets it waits one retransmission timeout,
  // max(200 ms, 2 · RTT), and so does everything queued behind it on the pair. Draws come from
  // `seed`, in event order, so a run stays deterministic. p = 0 turns it off.
  void set_packet_loss(double p, std::uint64_t seed);
  static constexpr std::uint64_t kShortTransferPackets = 4;
  static constexpr double kSegmentBytes = 1448;  // TCP payload per packet on a 1500-byte MTU

  std::size_t in_flight() const { return in_flight_; }
  std::size_t active_pairs() const { return pairs_.size(); }

 private:
  using Index = std::uint32_t;
  static constexpr Index kNone = 0xFFFFFFFFu;

  struct Transfer {
    PeerId from = 0, to = 0;
    std::uint64_t bytes = 0;
    Seconds started = 0;
    Done done;
    Engine::EventId event = 0;
    // Intrusive lists of the transfers in flight from and to each peer.
    Index prev_out = kNone, next_out = kNone, prev_in = kNone, next_in = kNone;
  };
  struct Pair {
    Seconds busy_until = 0;  // when the last transfer queued on this pair finishes serialising
    std::uint32_t in_flight = 0;
  };

  static std::uint64_t pair_key(PeerId from, PeerId to) { return static_cast<std::uint64_t>(from) << 32 | to; }
  Seconds path_latency(PeerId from, PeerId to) const { return links_[from].latency_s + links_[to].latency_s; }
  void check_peer(PeerId p) const;
  Index allocate();
  void link(Index t);
  void unlink(Index t);  // from the peer lists and the pair; frees nothing
  void release(Index t);
  void arrive(Index t);
  void fail_later(Seconds delay, Seconds started, Done done);

  Engine& engine_;
  std::vector<LinkSpec> links_;
  std::vector<bool> up_;
  std::vector<Index> out_head_, in_head_;
  std::vector<Transfer> transfers_;
  std::vector<Index> free_;
  std::unordered_map<std::uint64_t, Pair> pairs_;  // only pairs with transfers in flight
  std::unordered_map<std::uint64_t, double> pair_caps_;
  std::unordered_map<std::uint64_t, double> pacing_;
  std::size_t in_flight_ = 0;
  std::uint64_t bytes_delivered_ = 0;
  double loss_ = 0;
  core::Rng loss_rng_;
};

}  // namespace swarmlab::sim
