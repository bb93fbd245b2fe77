#pragma once
// Hosts many simulated peers in one process: one core::Environment per peer, bound to the event
// engine and a network backend. Peers can be brought down and up (churn); a down peer's timers,
// compute jobs and deliveries are voided, as if its process had died.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"
#include "sim/binding/chrome_trace.h"
#include "sim/engine.h"
#include "sim/network/network.h"

namespace swarmlab::sim {

struct SimPeerSpec {
  std::string name;
  double compute_sps = 0;  // samples/s; 0 = cannot compute
};

class SimWorld {
 public:
  SimWorld(Engine& engine, Network& network, std::vector<SimPeerSpec> peers, std::uint64_t seed);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  std::size_t size() const { return peers_.size(); }
  core::Environment& env(core::PeerId peer);
  Engine& engine() { return engine_; }
  Network& network() { return network_; }

  // How a peer leaves. Crash: its process dies and the operating system closes its connections,
  // so every peer that has exchanged messages with it gets on_link_failure, once however many
  // messages were queued either way; later sends to it are refused (the sender hears of it one
  // path latency later). Silent: it vanishes from the network (power loss, partition) and nobody
  // is told; others must time out. Either way its messages in flight are lost.
  enum class Departure { Crash, Silent };

  bool is_up(core::PeerId peer) const;
  // Takes a peer down: the network aborts its transfers and its pending timers and compute jobs
  // never fire. Who hears about it depends on `how`.
  void set_down(core::PeerId peer, Departure how = Departure::Crash);
  void set_up(core::PeerId peer);

  // Which ordered pairs can open a connection (NAT, docs/trust.md §4); unset: every pair. A send
  // on a pair that cannot is refused: the sender hears on_link_failure, and nothing is sent.
  void set_connects(std::function<bool(core::PeerId from, core::PeerId to)> connects) { connects_ = std::move(connects); }

  // Called for every message delivered, before the receiver sees it (failure injection, stats).
  using DeliveryObserver = std::function<void(core::PeerId from, core::PeerId to, const core::Message&)>;
  void set_delivery_observer(DeliveryObserver observer) { delivery_observer_ = std::move(observer); }

  // Optional timeline output; spans are recorded only when set.
  void set_trace(ChromeTrace* trace);
  ChromeTrace* trace() { return trace_; }

  std::uint64_t messages_delivered() const { return messages_delivered_; }
  // Bytes this peer put on the wire / received, framing included (whole run, every incarnation).
  std::uint64_t bytes_sent(core::PeerId peer) const;
  std::uint64_t bytes_received(core::PeerId peer) const;
  // Bytes of messages from or to this peer that are still on their way.
  std::uint64_t bytes_in_flight(core::PeerId peer) const;
  // Traffic a peer moved without the network (a replayed round, sim/binding/round_replay.h).
  void charge(core::PeerId peer, std::uint64_t sent, std::uint64_t received);

 private:
  class PeerEnvironment;
  void deliver(core::PeerId from, core::PeerId to, std::uint64_t to_epoch, core::Message message);
  void landed(core::PeerId from, core::PeerId to, std::uint64_t bytes);
  // `at` hears that its connection to `other` (incarnation `other_epoch`, now ended) broke.
  void link_broke(core::PeerId at, std::uint64_t at_epoch, core::PeerId other, std::uint64_t other_epoch);
  // `at` tried to reach `other` while it was down.
  void link_refused(core::PeerId at, std::uint64_t at_epoch, core::PeerId other);

  Engine& engine_;
  Network& network_;
  std::vector<std::unique_ptr<PeerEnvironment>> peers_;
  ChromeTrace* trace_ = nullptr;
  DeliveryObserver delivery_observer_;
  std::function<bool(core::PeerId, core::PeerId)> connects_;
  std::uint64_t messages_delivered_ = 0;
};

}  // namespace swarmlab::sim
