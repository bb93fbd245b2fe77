#pragma once
// Co-simulation of ns-3 with the swarmlab engine. ns-3 keeps its own global clock and event list;
// this class is the engine's external event source (sim/engine.h): before the engine runs an
// event at time t, ns-3 runs its packet events up to t. When an ns-3 event produces something for
// the engine (a message arrived, a connection broke), post() schedules it on the engine at the
// ns-3 time and stops ns-3 right after the current event, so the engine handles it before any
// later packet event. Both clocks therefore advance together and a run is deterministic.
//
// Owns ns-3's global simulator for its lifetime: one Ns3Clock at a time per process; the
// destructor calls Simulator::Destroy so the next run starts from a clean simulator.
#include <cstdint>
#include <functional>

#include "sim/engine.h"

namespace swarmlab::sim {

class Ns3Clock final : public ExternalEventSource {
 public:
  // `has_work` says whether unbounded runs are worth it: when the engine has nothing left to do,
  // ns-3 runs on only while some transfer is still owed a completion (idle housekeeping such as
  // delayed ACKs then waits until time moves on for another reason).
  Ns3Clock(Engine& engine, std::function<bool()> has_work);
  ~Ns3Clock() override;
  Ns3Clock(const Ns3Clock&) = delete;
  Ns3Clock& operator=(const Ns3Clock&) = delete;

  void run_until(Seconds t) override;
  // Runs `fn` on the engine at the current ns-3 time, before any later ns-3 event.
  void post(std::function<void()> fn) { post_at(now(), std::move(fn)); }
  // Runs `fn` on the engine at time `t` (>= now), before any later ns-3 event.
  void post_at(Seconds t, std::function<void()> fn);

  Seconds now() const;
  std::uint64_t events() const;  // ns-3 events processed so far
  Engine& engine() { return engine_; }

  static std::int64_t to_ns(Seconds t);

 private:
  Engine& engine_;
  std::function<bool()> has_work_;
  bool running_ = false;  // inside Simulator::Run: post() must stop it
};

}  // namespace swarmlab::sim
