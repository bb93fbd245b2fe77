#pragma once
// What the conformance suite needs from a binding of the environment seam (core/env.h): n peers,
// each a core::Environment, a clock to run, and two ways to take a peer down. One factory per
// binding (bindings.cc) makes them; the suite (environment_conformance_test.cc) runs every test
// over every binding.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/env.h"

namespace swarmlab::conformance {

using core::PeerId;
using core::Seconds;

struct BindingOptions {
  std::size_t peers = 2;
  double link_bps = 100e6;    // every peer's access link, each way (simulated bindings)
  Seconds latency = 0.005;    // one-way access latency (simulated bindings)
  double compute_sps = 1000;  // every peer's compute speed; 0: no compute
  std::uint64_t seed = 1;
};

class TestBinding {
 public:
  virtual ~TestBinding() = default;
  virtual std::size_t size() const = 0;
  // Peer i's environment; not after crash(i).
  virtual core::Environment& env(PeerId peer) = 0;
  virtual Seconds now() const = 0;
  // Runs until `done()` holds (checked after every event) or the clock reaches `deadline`;
  // returns done().
  virtual bool run_until(const std::function<bool()>& done, Seconds deadline) = 0;
  // The process dies: the OS closes its connections.
  virtual void crash(PeerId peer) = 0;
  // It vanishes without closing anything (power loss; live: its process stops being scheduled).
  virtual void vanish(PeerId peer) = 0;

  void run_until(Seconds t) { run_until([] { return false; }, t); }
  void run_for(Seconds d) { run_until(now() + d); }
  bool wait_for(const std::function<bool()>& done, Seconds timeout) { return run_until(done, now() + timeout); }
};

// What differs between bindings, honestly: simulated time is exact, a real clock is not.
struct Traits {
  bool virtual_time = true;
  Seconds clock_slack = 0;        // how late a timer or compute job may complete (real clocks)
  // Relative error of a paced transfer's rate (virtual time); above it on a real clock, where
  // the rate is only a limit.
  double pacing_tolerance = 0;
  // Bytes a newly paced connection may send ahead of the rate (a real TCP's first burst); the
  // rate is measured after them.
  std::size_t pacing_burst_bytes = 0;
};

struct BindingFactory {
  virtual ~BindingFactory() = default;
  virtual std::string name() const = 0;
  virtual Traits traits() const = 0;
  virtual std::unique_ptr<TestBinding> make(const BindingOptions& options) const = 0;
};

// Every binding the suite covers, by name: flow, latency, ns3, memory, live, relayed (the relay
// layer over the memory world, every pair through a relay).
const std::vector<std::string>& binding_names();
const BindingFactory& binding(const std::string& name);

}  // namespace swarmlab::conformance
