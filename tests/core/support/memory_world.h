#pragma once
// The core's test double for the environment seam: many peers in one process, each a
// core::Environment, on a time-ordered event queue, with no simulator behind them. The core's own
// test binary links nothing but the core and this.
//
// What it models, and no more:
// - Events run in (time, insertion order), so two events due at one instant run in the order they
//   were scheduled and a run is a pure function of its inputs and seed.
// - A message from a to b leaves once a's uplink has carried it (each peer sends its messages one
//   after another at its upload rate) and, when a paces its connection to b, once that pair's own
//   FIFO at the pacing rate has let it go (a paced connection does not hold up a's others); then
//   it travels the path latency latency(a) + latency(b). Arrivals on an ordered pair are in send
//   order. There is no download limit and no sharing: enough for tests that look at the order of
//   events and at upload times, not a fluid model (the simulator has one, tests/sim).
// - Peers go down by crash (every peer it exchanged messages with hears on_link_failure once;
//   later sends to it are refused, which the sender hears one path latency later) or silently
//   (nobody is told; only timeouts notice). Either way its timers, compute jobs and messages in
//   flight from or to it are void. set_up brings it back, with nothing pending.
// - Compute: a peer's jobs run one at a time in submission order, each samples / compute_sps long.
// - Optional faults for protocols that must not rely on the seam's delivery guarantees (Raft):
//   loss, duplication, random delay with or without reordering, and blocked (partitioned) pairs.
//   Without them every message is delivered exactly once and in order.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/env.h"
#include "core/rng.h"

namespace swarmlab::core::testing {

struct PeerSpec {
  Seconds latency = 0.025;  // one-way access latency: a to b takes latency(a) + latency(b)
  double upload_bps = 0;    // 0: unlimited, messages leave at once
  double compute_sps = 0;   // samples/s; 0: compute() throws std::logic_error
};

// Faults on every message (when set with MemoryWorld::set_faults): a message is lost with
// probability `drop`, delivered twice with probability `duplicate`, and travels a one-way delay
// uniform in [min_delay, max_delay] instead of the path latency; `fifo` keeps each ordered pair
// in order, false lets the delays reorder messages.
struct LinkFaults {
  double drop = 0;
  double duplicate = 0;
  Seconds min_delay = 0.001;
  Seconds max_delay = 0.005;
  bool fifo = true;
};

class MemoryWorld {
 public:
  using EventId = std::uint64_t;
  enum class Departure { Crash, Silent };

  MemoryWorld(std::vector<PeerSpec> peers, std::uint64_t seed = 1);
  explicit MemoryWorld(std::size_t peers, PeerSpec each = {}, std::uint64_t seed = 1)
      : MemoryWorld(std::vector<PeerSpec>(peers, each), seed) {}
  ~MemoryWorld();
  MemoryWorld(const MemoryWorld&) = delete;
  MemoryWorld& operator=(const MemoryWorld&) = delete;

  Environment& env(PeerId peer);
  std::size_t size() const { return peers_.size(); }

  // --- The event queue -------------------------------------------------------------------------
  Seconds now() const { return now_; }
  // Runs `fn` at absolute time `t` (the past is clamped to now); not tied to any peer.
  EventId at(Seconds t, std::function<void()> fn);
  EventId after(Seconds delay, std::function<void()> fn) { return at(now_ + delay, std::move(fn)); }
  void cancel(EventId id) { events_.erase(id); }
  // Runs the next event; false when none is pending.
  bool step();
  // Runs until no event is pending.
  void run();
  // Runs every event due at or before `t`, then sets the clock to `t`.
  void run_until(Seconds t);
  void run_for(Seconds d) { run_until(now_ + d); }
  std::size_t pending() const { return events_.size(); }

  // --- Peers -----------------------------------------------------------------------------------
  bool is_up(PeerId peer) const;
  void set_down(PeerId peer, Departure how = Departure::Crash);
  void set_up(PeerId peer);
  // Pending timers scheduled by `peer` (neither fired nor cancelled), for leak checks.
  std::size_t outstanding_timers(PeerId peer) const;

  // --- Faults ----------------------------------------------------------------------------------
  void set_faults(const LinkFaults& faults);
  void clear_faults() { faults_enabled_ = false; }
  const LinkFaults& faults() const { return faults_; }
  // Cuts (or restores) both directions between a and b; messages in flight are lost too.
  void set_blocked(PeerId a, PeerId b, bool blocked);
  // Cuts (or restores) the direction from -> to only.
  void set_blocked_one_way(PeerId from, PeerId to, bool blocked);
  // Only peers in the same group can talk; peers in no group are cut off from everyone.
  void partition(const std::vector<std::vector<PeerId>>& groups);
  // Cuts `peer` off from each of `others`.
  void isolate(PeerId peer, const std::vector<PeerId>& others);
  void heal();
  bool blocked(PeerId from, PeerId to) const { return blocked_[key(from, to)]; }

  // --- Observation -----------------------------------------------------------------------------
  using Observer = std::function<void(PeerId from, PeerId to, const Message&)>;
  // Every message a peer that is up sends, before anything can happen to it.
  Observer on_send;
  // Every message about to be delivered, before the receiver sees it. It may take peers down.
  Observer on_deliver;

  struct Stats {
    std::uint64_t sent = 0, delivered = 0, dropped = 0, duplicated = 0;
  };
  const Stats& stats() const { return stats_; }
  // Bytes (wire size, framing included) a peer sent / received, and delivered in total.
  std::uint64_t bytes_sent(PeerId peer) const;
  std::uint64_t bytes_received(PeerId peer) const;
  std::uint64_t bytes_delivered() const { return bytes_delivered_; }

 private:
  class Peer;
  std::size_t key(PeerId from, PeerId to) const { return static_cast<std::size_t>(from) * size() + to; }
  Peer& peer(PeerId p) const;
  void transmit(Peer& from, PeerId to, Message message);
  void deliver(PeerId from, std::uint64_t from_epoch, PeerId to, std::uint64_t to_epoch, const Message& message);
  // `at` hears that its connection to `other` (incarnation `other_epoch`) broke: once per incarnation.
  void connection_broke(PeerId at, std::uint64_t at_epoch, PeerId other, std::uint64_t other_epoch);
  // `at` tried to reach `other` while it was down: once per instant.
  void connection_refused(PeerId at, std::uint64_t at_epoch, PeerId other);

  std::vector<std::unique_ptr<Peer>> peers_;
  Seconds now_ = 0;
  EventId next_event_ = 1;  // also the handle space of timers and compute jobs: 0 is never issued
  std::priority_queue<std::tuple<Seconds, EventId>, std::vector<std::tuple<Seconds, EventId>>, std::greater<>>
      queue_;
  std::unordered_map<EventId, std::function<void()>> events_;
  Rng fault_rng_;
  LinkFaults faults_;
  bool faults_enabled_ = false;
  std::vector<bool> blocked_;
  std::vector<Seconds> last_arrival_;  // per ordered pair, for in-order delivery
  Stats stats_;
  std::uint64_t bytes_delivered_ = 0;
};

}  // namespace swarmlab::core::testing
