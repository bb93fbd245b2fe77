#pragma once
// The circuit relay as a layer of the environment seam (docs/trust.md §4), below the services (and
// below authentication, which stays end to end: a relay forwards sealed envelopes it cannot
// forge). A message for a peer this one cannot reach directly goes to the pair's relay in a
// Forward frame; the relay passes it on in a Deliver frame, which this layer unwraps and hands to
// the services as coming from the original sender. Protocol code is unchanged, and the same layer
// runs in every binding, so the relayed bytes really cross the relay's links: in the simulator
// they are two transfers charged to the relay's download and upload, live two TCP connections.
//
// Failures keep the seam's promises (core/env.h): a send to a peer that nothing can reach is
// refused (on_link_failure later); when a relay's connection to one end of a circuit breaks it
// tells the other end (Unreachable), and when an end's connection to its relay breaks, every peer
// it reached through that relay is reported failed. A relay forwards only for pairs that
// Reachability assigns to it, so it is no open proxy, and drops malformed frames.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>

#include "core/env.h"
#include "core/forwarding_environment.h"
#include "core/relay/reachability.h"

namespace swarmlab::core::relay {

class RelayedEnvironment final : public ForwardingEnvironment, public Service {
 public:
  RelayedEnvironment(Environment& inner, const Reachability& reachability);
  ~RelayedEnvironment() override;
  RelayedEnvironment(const RelayedEnvironment&) = delete;
  RelayedEnvironment& operator=(const RelayedEnvironment&) = delete;

  void send(PeerId to, Message message) override;
  // Pacing stays per pair when pairs share a connection: a NAT'd peer's connection to a relay
  // carries its circuits, and a relay's connection to a NAT'd peer what it forwards. Such a
  // connection runs unpaced, and this layer releases each pair's messages at the pair's rate
  // (what a relay forwards is not paced again). Other connections are paced by the transport.
  void set_pacing(PeerId to, double bits_per_s) override;
  void set_sink(Service* sink) override { sink_ = sink; }

  // The inner environment delivers here.
  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  struct Stats {
    std::uint64_t sent_relayed = 0;      // messages this peer sent through a relay
    std::uint64_t received_relayed = 0;  // messages that reached this peer through a relay
    std::uint64_t forwarded = 0;         // messages this peer relayed for others
    std::uint64_t forwarded_bytes = 0;   // their wire size as this peer sent them on
    std::uint64_t refused = 0;           // sends to a peer nothing can reach
    std::uint64_t dropped_frames = 0;    // malformed relay frames, or frames for a pair not ours to relay
  };
  const Stats& stats() const { return stats_; }

 private:
  void refuse(PeerId to);
  // Hands a message to the connection: to `to` directly, or in a frame to the pair's relay.
  void transmit(PeerId to, Message message);
  double requested(PeerId to) const;
  // Whether messages to `to` share a connection with other pairs' traffic: a circuit; this peer's
  // connection to a relay once one of its circuits through it is paced; a relay's connection to
  // a peer it forwards to. Such connections run unpaced, and each pair on them is paced here.
  bool shared(PeerId to) const;
  double layer_rate(PeerId to) const;  // the rate this layer paces `to` at (0: none)
  void apply_pacing(PeerId to);        // sets the direct connection's pacing after a change
  void rerelease(PeerId to);           // its rate changed: release what is due now
  // Sends what is due of `to`'s paced stream, and waits for the rest.
  void release(PeerId to);
  void drop_stream(PeerId to);

  const Reachability& reach_;
  Service* sink_ = nullptr;
  Stats stats_;
  // As an end: the peers reached through a relay, by relay (reported failed if it goes).
  std::map<PeerId, std::set<PeerId>> circuits_;
  // As a relay: for each end, the peers it has circuits with through this peer.
  std::map<PeerId, std::set<PeerId>> relayed_;
  std::set<PeerId> refusing_;
  std::map<PeerId, double> requested_;  // pacing the services asked for, per peer (0: none)
  struct Stream {
    std::deque<Message> queue;  // waiting for their slot at the pair's rate
    Seconds next_free = 0;      // when the pair's rate allows the next message
    TimerHandle timer = 0;
  };
  std::map<PeerId, Stream> streams_;  // pairs paced here
  std::map<PeerId, int> paced_circuits_;  // per relay: this peer's circuits through it with a pace  // refusals whose on_link_failure is pending
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace swarmlab::core::relay
