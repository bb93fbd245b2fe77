#pragma once
// core::Environment for one real peer process: time is the monotonic clock, timers and socket
// events run on one EventLoop, messages travel over TcpTransport, compute runs on a worker thread
// (exec/compute_worker.h) and completes on the loop. Every callback into the core therefore runs
// on the loop thread, as the seam requires.
//
// Differences from the simulated binding, all deliberate:
// - Virtual payloads are refused (std::invalid_argument): a live message carries its real bytes.
// - set_pacing maps bits/s to SO_MAX_PACING_RATE bytes/s, unless pacing is disabled (a run whose
//   links are not the scenario's, e.g. plain loopback, where the planner's rates mean nothing).
// - trace() appends JSON lines {"peer","cat","name","start","end"} to a file, when one is given.
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "core/env.h"
#include "exec/compute_worker.h"
#include "exec/event_loop.h"
#include "exec/tcp_transport.h"

namespace swarmlab::exec {

struct LiveEnvironmentOptions {
  std::uint64_t seed = 1;        // the rng is core::Rng(seed ^ process_nonce, self + 1)
  // Drawn from the OS per process (LiveHost): a restarted peer's draws (group ids among them) must
  // not repeat its predecessor's, which its peers still remember. 0: as in the simulator.
  std::uint64_t process_nonce = 0;
  double compute_sps = 0;        // samples/s of the v1 compute stand-in; 0 = cannot compute
  bool pacing = true;
  std::string trace_path;        // empty: no timeline
};

class LiveEnvironment final : public core::Environment {
 public:
  LiveEnvironment(EventLoop& loop, TcpTransport::Options transport, LiveEnvironmentOptions options);
  ~LiveEnvironment() override;

  // Starts listening and dialing (after set_sink).
  void start() { transport_.start(); }
  TcpTransport& transport() { return transport_; }
  EventLoop& loop() { return loop_; }

  core::PeerId self() const override { return self_; }
  core::Seconds now() const override { return loop_.now(); }
  core::TimerHandle schedule(core::Seconds delay, std::function<void()> fn) override;
  core::TimerHandle schedule_at(core::Seconds due, std::function<void()> fn) override;
  void cancel(core::TimerHandle handle) override;
  void send(core::PeerId to, core::Message message) override;
  void set_pacing(core::PeerId to, double bits_per_s) override;
  void set_sink(core::Service* sink) override { sink_ = sink; }
  core::TimerHandle compute(std::uint64_t samples, std::function<void()> done) override;
  core::Rng& rng() override { return rng_; }
  void trace(std::string_view category, std::string_view name, core::Seconds start, core::Seconds end) override;

  std::uint64_t pacing_calls() const { return pacing_calls_; }

 private:
  // Compute handles live in the upper half of the handle space, timers in the lower.
  static constexpr core::TimerHandle kComputeBit = 1ull << 63;

  EventLoop& loop_;
  core::PeerId self_;
  LiveEnvironmentOptions options_;
  TcpTransport transport_;
  ComputeWorker worker_;
  core::Rng rng_;
  core::Service* sink_ = nullptr;
  std::unique_ptr<std::ofstream> trace_;
  std::uint64_t pacing_calls_ = 0;
};

}  // namespace swarmlab::exec
