#pragma once
// What every live peer process shares, whatever it runs (an averaging-only peer, a training peer):
// the event loop on the run's shared clock, the LiveEnvironment over TCP, joining the DHT once the
// connections are up, giving up after a quiet spell, and leaving cleanly (queued messages reach
// the kernel, pending report lines are written, then the loop stops). The host decides nothing
// about the protocol: it starts a core::training::CollaborativePeer and keeps its books.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/auth/authenticated_environment.h"
#include "core/relay/relayed_environment.h"
#include "core/training/collaborative_peer.h"
#include "exec/event_loop.h"
#include "exec/live_environment.h"
#include "exec/token_refresher.h"
#include "exec/socket_address.h"

namespace swarmlab::exec {

// Allowlist authentication (docs/trust.md §1): this peer's key and token, the authority's public
// key, and every peer's public key by id (the run's key directory, shared like its addresses).
struct LiveAuthConfig {
  core::auth::KeyPair key;
  core::auth::AccessToken token;
  core::auth::PublicKey authority{};
  std::vector<std::optional<core::auth::PublicKey>> peer_keys;
  std::string token_path;          // looked at every refresh_period_s for a newer token (empty: never)
  double refresh_period_s = 1;
};

struct LiveHostConfig {
  core::PeerId id = 0;
  // Every peer by id; nullopt = client mode, or (with `discover`) not known yet.
  std::vector<std::optional<SocketAddress>> addresses;
  bool discover = false;           // learn the missing addresses (exec/address_directory.h)
  std::optional<SocketAddress> listen;                  // bind here instead of addresses[id]
  std::uint64_t seed = 1;
  double compute_sps = 0;          // the environment's compute stand-in (0: none)
  double connect_timeout_s = 5;
  double idle_timeout_s = 120;     // give up when the peer makes no progress for this long
  double clock_origin = -1;        // CLOCK_MONOTONIC seconds of the run's t = 0
  std::uint64_t network = 0;       // run identity for the handshake
  bool pacing = true;              // apply the plan's pacing (SO_MAX_PACING_RATE)
  double pace_all_bps = 0;         // > 0: pace every connection at this rate instead (test knob)
  std::string trace_path;
  std::string congestion_control;  // TCP_CONGESTION for every connection; empty: the system's
  std::optional<LiveAuthConfig> auth;  // every message signed and checked
  // The scenario's "nat_traversal" (docs/trust.md §4): client pairs reach each other through
  // relays; null: they cannot at all.
  std::shared_ptr<const core::relay::Reachability> reachability;
  // Hole punching: per peer, where a peer behind a cone NAT punches from (TcpTransport::Options::punch).
  std::vector<std::optional<SocketAddress>> punch;
};

class LiveHost {
 public:
  LiveHost(const LiveHostConfig& config, std::ostream& log);

  EventLoop& loop() { return loop_; }
  LiveEnvironment& env() { return *env_; }
  // Where the peer's services run: the authenticating layer when auth is on, over the relay layer
  // with nat_traversal, over env().
  core::Environment& peer_env() {
    if (auth_) return auth_->env();
    if (relayed_) return *relayed_;
    return *env_;
  }
  double now() const { return loop_.now(); }

  // Listens and dials, then calls `join` with the DHT's bootstrap peers once connected to everyone
  // reachable (or after half the connect timeout): the launch starts every process at once, so
  // the DHT bootstrap finds its peers listening and the first round does not measure connection
  // setup. Every peer that accepts connections can bootstrap the DHT; any of them answering is
  // enough.
  void start(std::function<void(std::vector<core::PeerId> bootstrap)> join);
  // The same for a collaborative peer: join = peer.start.
  void start(core::training::CollaborativePeer& peer) {
    start([&peer](std::vector<core::PeerId> bootstrap) { peer.start(std::move(bootstrap)); });
  }
  // Runs the loop until finish() has drained, or the idle timeout gave up. Returns whether it gave up.
  bool run();

  // Progress: the idle timeout starts again.
  void keep_alive();
  // Leave: let queued messages reach the kernel and pending reports be written, then stop.
  void finish();
  bool finishing() const { return finishing_; }
  // A report line still to be written holds the exit (hold before, release after).
  void hold() { ++holds_; }
  void release() { --holds_; }
  // Runs `then` on the loop once this peer's queued bytes reached the kernel (or by `deadline`):
  // work that takes the loop a while must not delay parts others are waiting for.
  void after_drain(double deadline, std::function<void()> then);

  // The transport counters and CPU time, for a peer's final line.
  void add_exit_counters(nlohmann::ordered_json& line);
  void log(const std::string& line);

 private:
  bool mesh_ready() const;
  void drain(double deadline);

  const LiveHostConfig& cfg_;
  std::ostream& log_;
  EventLoop loop_;
  std::unique_ptr<LiveEnvironment> env_;
  std::unique_ptr<core::relay::RelayedEnvironment> relayed_;
  std::unique_ptr<core::auth::AuthenticatedPeer> auth_;
  std::unique_ptr<TokenRefresher> token_refresher_;
  EventLoop::TimerId idle_timer_ = 0;
  std::size_t holds_ = 0;
  bool abandoned_ = false;
  bool finishing_ = false;
};

}  // namespace swarmlab::exec
