#pragma once
// What a simulated network model does for the simulator: move byte counts between peers, in order
// per ordered pair of peers, and report when they arrive or fail. Three models implement it: the
// fluid model (sim/network/flow_network.h, for sweeps), packet-level TCP on ns-3
// (sim/network/ns3/, for fidelity) and latency only (sim/network/latency_network.h, for DHT-scale
// runs of small messages).
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/env.h"

namespace swarmlab::sim {

using core::PeerId;
using core::Seconds;

inline constexpr double kUnlimited = std::numeric_limits<double>::infinity();

// Static description of one peer's access link.
struct LinkSpec {
  double download_bps = 0;
  double upload_bps = 0;
  Seconds latency_s = 0;  // one-way, access link
};

// Throws std::invalid_argument naming `network` and `what` unless `bps` >= 0.
inline void check_link_rate(double bps, const char* network, const char* what) {
  if (!(bps >= 0)) throw std::invalid_argument(std::string(network) + ": " + what + " must be >= 0 bits/s");
}

struct TransferOutcome {
  bool delivered = false;
  Seconds started = 0;   // when its first byte went on the wire (after earlier transfers on the pair)
  Seconds finished = 0;  // arrival of the last byte, or the moment the failure was noticed
};

class Network {
 public:
  using Done = std::function<void(const TransferOutcome&)>;
  virtual ~Network() = default;

  virtual std::string_view name() const = 0;

  // Sends `bytes` from `from` to `to` after everything queued earlier on the same ordered pair.
  // `done` runs once: when the last byte arrives, or when either end goes down first.
  virtual void transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) = 0;
  // The same for coordination traffic (DHT, matchmaking, progress: small messages, never the
  // payload of a round). A backend may carry it outside its bandwidth sharing; by default it is
  // a message like any other.
  virtual void transmit_control(PeerId from, PeerId to, std::uint64_t bytes, Done done) {
    transmit(from, to, bytes, std::move(done));
  }

  // A peer going down aborts every transfer from or to it; coming up makes it reachable again.
  virtual void set_peer_up(PeerId peer, bool up) = 0;
  // Changes a peer's access-link rates (bandwidth traces). Transfers in flight adapt.
  virtual void set_capacity(PeerId peer, double download_bps, double upload_bps) = 0;
  // Caps the rate from `from` to `to` (regional limits); kUnlimited removes the cap.
  virtual void set_pair_cap(PeerId from, PeerId to, double bps) = 0;

  // Paces the connection from `from` to `to` (a sender-side rate limit; kUnlimited = none).
  // Independent of pair caps: both apply. Backends that cannot pace say so rather than ignore it.
  virtual void set_pacing(PeerId from, PeerId to, double bps) {
    (void)from, (void)to, (void)bps;
    throw std::logic_error("the " + std::string(name()) + " network backend does not support pacing");
  }

  // Bytes delivered so far, in total and per peer as sender (for traffic accounting).
  virtual std::uint64_t bytes_delivered() const = 0;
};

}  // namespace swarmlab::sim
