#pragma once
// The environment seam: everything the protocol core needs from the world, and nothing more.
//
// The core never reads a clock, opens a socket or sleeps. It is driven by callbacks from an
// Environment, in the style of LevelDB's Env and OpenDHT's periodic(now) + injected socket. Two
// bindings implement it: the simulator (sim/), where time is virtual and the network is a model,
// and the live mode (exec/), where time is the monotonic clock and messages travel over TCP. The
// core's own tests use a third, an in-memory double (tests/core/support/memory_world.h). The
// conformance suite (tests/conformance/) checks every semantic stated below on each of them.
//
// Why it looks the way it does:
// - One Environment per peer. A peer only ever sees its own view: its id, its clock, its compute.
//   The simulator hosts thousands of peers in one process, each with its own Environment.
// - Single-threaded callbacks. Every callback into the core (timer, message, compute done, link
//   failure) runs on one logical thread per peer. The simulator gets this for free; the live mode
//   posts work from its I/O and compute threads onto one event loop. The core therefore needs no
//   locks, and a simulated run is deterministic.
// - Messages are bytes plus an optional virtual payload. The header and all small content are
//   really encoded (core/wire.h), so the simulator charges exactly what the live mode would put on
//   the wire and the same decoder is exercised everywhere. Bulk tensor payloads may be virtual in
//   the simulator (size only, for fast sweeps); the live mode always carries real bytes.
// - Messages between a pair of peers are delivered in order (one stream per ordered pair, as with
//   TCP). Protocols rely on this to stream a span in parts.
// - Failures surface as on_link_failure(peer): the connection to that peer broke (the process died,
//   the link went down). Timeouts are the core's business, built from timers. Precisely:
//   * when a peer crashes, every peer that exchanged messages with it hears on_link_failure once,
//     however many messages were queued either way; a peer it never talked to hears nothing;
//   * a send to a peer that is down is refused: the sender hears on_link_failure (later);
//   * after on_link_failure(p), nothing more arrives from that incarnation of p;
//   * a peer that vanishes without its connections closing (power loss, a frozen process) causes
//     no on_link_failure at all; its messages just stop.
// - Pacing is a transport feature (a per-connection rate limit), so it is part of the seam: the
//   planner's send rates are imposed the same way over the fluid model, ns-3 and real sockets.
// - Compute is asynchronous: "process N samples" completes later, after the time this peer's speed
//   implies (simulator) or after real training (live mode).
#include <cstdint>
#include <functional>
#include <string_view>

#include "core/message.h"
#include "core/rng.h"
#include "core/service.h"
#include "core/types.h"

namespace swarmlab::core {

class Environment {
 public:
  virtual ~Environment() = default;

  virtual PeerId self() const = 0;
  virtual Seconds now() const = 0;

  // Runs `fn` after `delay` seconds (>= 0; otherwise std::invalid_argument), never earlier. Timers
  // due at the same instant run in the order they were scheduled.
  virtual TimerHandle schedule(Seconds delay, std::function<void()> fn) = 0;
  // Runs `fn` at time `due` (a past `due` runs it at once, on a later turn), as schedule does. Use
  // it for deadlines instead of schedule(due - now()): in live mode the clock moves while a handler
  // runs, so `due` checked against one now() read can be past by the next read, and a negative
  // delay throws. The default reads the clock once; a binding may keep `due` exactly. Where it
  // does not (the simulator), the timer can run when now() is a rounding step short of `due`:
  // compare with kTimerSlack (core/types.h), or a timer that re-arms itself until `due` can loop
  // at one instant for good.
  virtual TimerHandle schedule_at(Seconds due, std::function<void()> fn) {
    const Seconds delay = due - now();
    return schedule(delay < 0 ? 0.0 : delay, std::move(fn));  // a NaN `due` throws there
  }
  // Cancels a pending timer or compute job. Cancelling a fired, cancelled or unknown handle (or 0)
  // does nothing.
  virtual void cancel(TimerHandle handle) = 0;

  // Queues `message` to `to`. Delivery happens later through `to`'s Service::handle, whole and in
  // send order with respect to this peer's other messages to `to`. `to` must be another peer of
  // the collaboration: sending to itself or to an id outside it is a programming error, and every
  // binding throws std::out_of_range.
  virtual void send(PeerId to, Message message) = 0;
  // Limits the rate of this peer's connection to `to` (bits/s; 0 = no limit), as Linux's
  // SO_MAX_PACING_RATE does. Protocols use it to impose a planned rate split across connections.
  // `to` as for send (std::out_of_range otherwise).
  virtual void set_pacing(PeerId to, double bits_per_s) = 0;
  // Where this peer's incoming messages and link failures go (usually its ServiceMux). Set before
  // the first send; nullptr drops everything (the peer is shutting down).
  virtual void set_sink(Service* sink) = 0;

  // Processes `samples` training samples and calls `done` when finished. Returns a handle that
  // cancel() accepts. The duration is samples / this peer's compute speed in the simulator. A
  // peer's jobs run one at a time in submission order, as on one accelerator; cancelling the
  // running job frees it at once for the next. A peer without compute throws std::logic_error.
  virtual TimerHandle compute(std::uint64_t samples, std::function<void()> done) = 0;

  // This peer's deterministic random stream: core::Rng(run seed, self() + 1) in every binding, so
  // a simulated and a live run of one scenario draw the same numbers.
  virtual Rng& rng() = 0;

  // Records a span of activity on this peer's timeline (for Chrome trace output). Optional for
  // bindings: the default drops it.
  virtual void trace(std::string_view category, std::string_view name, Seconds start,
                     Seconds end) {
    (void)category, (void)name, (void)start, (void)end;
  }
};

}  // namespace swarmlab::core
