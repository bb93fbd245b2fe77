#pragma once
// The fluid network model: every active connection is a flow whose rate is the max-min fair share
// of the resources it crosses (the sender's upload, the receiver's download, and an optional pair
// cap), found by progressive filling. Bytes arrive one-way latency (sender's + receiver's access
// latency) after they leave.
//
// Rates are recomputed when a connection becomes active or idle, or when a capacity changes, and
// only for the connected component of resources that changed. Recomputation is deferred to the
// end of the current instant, so a burst of transfers started at one moment costs one
// recomputation. A connection that already has its next message queued keeps its rate: in a
// fluid model a back-to-back message does not change anyone's share.
//
// Coordination messages (transmit_control, at most control_bypass_bytes) sent on a connection with
// nothing queued do not join the sharing: each leaves at what one more flow would get on its
// resources (each resource's capacity over its flows plus one, the least of them) and arrives
// one-way latency later. Messages sent behind one on the same connection wait for it, so order
// per connection holds. The bulk flows' rates ignore them: they move a few KB against MB, and
// recomputing every rate around each of them cost more than anything else in coordination-heavy
// runs (docs/interpretations.md §27).
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine.h"
#include "sim/network/network.h"

namespace swarmlab::sim {

class FlowNetwork final : public Network {
 public:
  // The default bound on coordination messages carried outside the sharing; 0: none are.
  static constexpr std::uint64_t kControlBypassBytes = 64 << 10;
  FlowNetwork(Engine& engine, std::vector<LinkSpec> links, std::uint64_t control_bypass_bytes = kControlBypassBytes);

  std::string_view name() const override { return "flow"; }
  void transmit(PeerId from, PeerId to, std::uint64_t bytes, Done done) override;
  void transmit_control(PeerId from, PeerId to, std::uint64_t bytes, Done done) override;
  void set_peer_up(PeerId peer, bool up) override;
  void set_capacity(PeerId peer, double download_bps, double upload_bps) override;
  void set_pair_cap(PeerId from, PeerId to, double bps) override;
  void set_pacing(PeerId from, PeerId to, double bps) override;
  std::uint64_t bytes_delivered() const override { return bytes_delivered_; }

  // Inspection for tests and benchmarks.
  double flow_rate_bps(PeerId from, PeerId to) const;  // 0 when the pair is idle
  std::size_t active_flows() const { return active_flows_; }
  std::uint64_t recomputations() const { return recomputations_; }
  // Recomputes every active flow now (benchmarks measure this).
  void recompute_all();

 private:
  using Index = std::uint32_t;
  static constexpr Index kNone = 0xFFFFFFFFu;
  static constexpr int kMaxResources = 4;  // upload, download, pair cap, pacing

  // A message, in a pool: queued on its connection (a FIFO linked through `next`), then, from the
  // moment its last bit leaves until it is delivered, in flight.
  struct Transfer {
    std::uint64_t bytes = 0;
    Done done;
    Index next = kNone;  // the next in its connection's queue, or in the free list
    // In flight: what the delivery needs.
    Seconds started = 0;
    std::uint64_t epoch_from = 0, epoch_to = 0;
    PeerId from = 0, to = 0;
  };
  struct Connection {
    PeerId from, to;
    Index head = kNone, tail = kNone;  // queued transfers; the head is on the wire when flow != kNone
    Index flow = kNone;
    Seconds head_started = 0;
    // Coordination messages on the wire outside the sharing: the last of them leaves at this time,
    // and a message queued behind them starts then (head_waits: its start is scheduled).
    Seconds control_busy_until = 0;
    bool head_waits = false;
  };
  // Ordered pair -> connection: open addressing, linear probing; never erased, never iterated.
  class PairIndex {
   public:
    Index find(std::uint64_t key) const;
    // The value stored for `key`, storing `value` first if there was none.
    Index find_or_insert(std::uint64_t key, Index value);

   private:
    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
    std::size_t probe(std::uint64_t key) const;
    std::vector<std::uint64_t> keys_;
    std::vector<Index> values_;
    std::size_t count_ = 0;
  };
  // Everything a recomputation reads and writes of a flow, in one cache line: with a million
  // flows, memory traffic is what a recomputation costs. Positions in the resources' flow lists,
  // needed only to attach and detach, live in an array of their own.
  struct alignas(64) Flow {
    double remaining_bits = 0;
    double rate_bps = 0;
    Seconds updated = 0;
    Engine::EventId finish = 0;
    Index connection = kNone;
    std::uint32_t resource_count = 0;
    Index resources[kMaxResources];
    std::uint32_t visit = 0;   // the recomputation (visit_epoch_) that last reached it
    std::uint32_t frozen = 0;  // the recomputation that last froze it (progressive filling)
  };
  struct FlowPositions {
    Index in[kMaxResources];  // index of the flow in each of its resources' flow lists
  };
  struct Resource {
    double capacity_bps = 0;
    std::vector<Index> flows;
    bool dirty = false;
    std::uint32_t visit = 0;
    double remaining = 0;  // scratch for progressive filling
    Index unfrozen = 0;
  };

  Index upload_resource(PeerId p) const { return 2 * p; }
  Index download_resource(PeerId p) const { return 2 * p + 1; }
  Seconds path_latency(PeerId from, PeerId to) const { return links_[from].latency_s + links_[to].latency_s; }
  Index connection_for(PeerId from, PeerId to);
  void start_head(Index connection);
  // Starts the head of the queue now, or when the coordination messages before it have left.
  void start_when_free(Index connection);
  // What one more flow from `from` to `to` would get now (0 when a resource has no capacity).
  double extra_flow_rate(PeerId from, PeerId to) const;
  void on_finish(Index flow);
  void attach(Index flow);
  void detach(Index flow);
  void mark_dirty(Index resource);
  void schedule_recompute();
  void recompute_dirty();
  void fill(const std::vector<Index>& resources);
  void advance(Flow& f);
  void reschedule(Index flow);
  void fail_connection(Index connection);
  void check_peer(PeerId p) const;

  Engine& engine_;
  std::vector<LinkSpec> links_;
  std::uint64_t control_bypass_bytes_;
  // transmit() and transmit_control(): `bypass` lets a small enough message skip the sharing.
  void send(PeerId from, PeerId to, std::uint64_t bytes, Done done, bool bypass);
  std::vector<bool> up_;
  std::vector<std::uint64_t> up_epoch_;  // bumped when a peer goes down: voids deliveries in flight
  std::vector<Resource> resources_;
  // Per ordered pair: the scenario's cap (t_ij of docs/dedloc.md §2) and the sender's pacing, as
  // resources.
  std::unordered_map<std::uint64_t, Index> pair_resource_;
  std::unordered_map<std::uint64_t, Index> pacing_resource_;
  void set_pair_resource(std::unordered_map<std::uint64_t, Index>& table, PeerId from, PeerId to, double bps);
  std::vector<Connection> connections_;
  PairIndex connection_index_;
  std::vector<Transfer> transfers_;
  Index free_transfers_ = kNone;
  Index new_transfer(std::uint64_t bytes, Done done);
  void free_transfer(Index t);
  // Transfer `t`'s last bit left at `left`: it arrives one path latency later, unless an end went
  // down meanwhile (the ends' incarnations are taken now).
  void in_flight(Index t, PeerId from, PeerId to, Seconds started, Seconds left);
  void deliver(Index t);
  std::vector<std::vector<Index>> connections_of_peer_;
  // Per flow (a connection's message on the wire), by flow index.
  std::vector<Flow> flows_;
  std::vector<FlowPositions> positions_;
  std::vector<Index> free_flows_;
  std::vector<Index> dirty_;
  bool recompute_scheduled_ = false;
  std::uint32_t visit_epoch_ = 0;
  std::size_t active_flows_ = 0;
  std::uint64_t recomputations_ = 0;
  std::uint64_t bytes_delivered_ = 0;
  // Scratch buffers reused across recomputations.
  std::vector<Index> scratch_resources_, scratch_stack_;
  std::vector<std::pair<double, Index>> scratch_heap_;
};

}  // namespace swarmlab::sim
