#pragma once
// Discrete-event scheduler. Events run in (time, insertion order): two events due at the same
// instant run in the order they were scheduled, so a run is a pure function of its inputs.
#include <cstdint>
#include <functional>
#include <vector>

#include "core/env.h"

namespace swarmlab::sim {

using core::Seconds;

// Another discrete-event simulator whose events interleave with the engine's (ns-3's packet events,
// for a packet-level network backend). Before the engine runs an event at time t, the source runs
// its own events up to t, so the two clocks never cross.
class ExternalEventSource {
 public:
  virtual ~ExternalEventSource() = default;
  // Runs the source's events due at or before `t` (infinite: until it has nothing useful left) and
  // leaves its clock at `t`. It returns early, right after the event that scheduled an engine event,
  // so that engine event runs before any later external event.
  virtual void run_until(Seconds t) = 0;
};

class Engine {
 public:
  // Identifies a scheduled event for cancel(); 0 is never issued.
  using EventId = std::uint64_t;
  using Callback = std::function<void()>;

  Seconds now() const { return now_; }

  // Schedules `fn` at absolute time `t` (clamped to now: the past is not reachable).
  EventId at(Seconds t, Callback fn);
  EventId after(Seconds delay, Callback fn) { return at(now_ + delay, std::move(fn)); }
  // Cancels a pending event; a fired, cancelled or unknown id is ignored.
  void cancel(EventId id);

  // Runs the next event. Returns false when none is pending or stop() was called.
  bool step();
  // Runs until no event is pending or stop() is called.
  void run();
  // Runs every event due at or before `t`, then sets the clock to `t`.
  void run_until(Seconds t);
  // Makes run()/run_until() return after the current event.
  void stop() { stopped_ = true; }

  // Interleaves `source`'s events with this engine's (nullptr: none). Not owned.
  void set_external(ExternalEventSource* source) { external_ = source; }

  std::uint64_t events_processed() const { return processed_; }
  std::size_t pending() const { return live_; }

 private:
  struct Entry {
    Seconds time;
    std::uint64_t seq;   // global insertion counter: the tie-breaker
    std::uint32_t slot;
    std::uint32_t generation;
  };
  struct Slot {
    Callback fn;
    std::uint32_t generation = 0;
    bool pending = false;
  };
  static bool later(const Entry& a, const Entry& b) {
    return a.time > b.time || (a.time == b.time && a.seq > b.seq);
  }
  // Pops cancelled entries off the top of the heap.
  void skip_cancelled();
  // Lets the external source catch up to min(limit, next event); returns the next event's time.
  Seconds catch_up(Seconds limit);
  // Runs the event on top of the heap (there must be one).
  void run_top();

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  Seconds now_ = 0;
  std::uint64_t next_seq_ = 0;
  std::uint64_t processed_ = 0;
  std::size_t live_ = 0;
  bool stopped_ = false;
  ExternalEventSource* external_ = nullptr;
};

}  // namespace swarmlab::sim
