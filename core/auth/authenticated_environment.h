#pragma once
// The allowlist authentication as a layer of the environment seam (docs/trust.md §1): the peer's
// services run on this Environment, which seals every message they send in a signed envelope
// (core/auth/authenticator.h) and opens every message that arrives before the services see it;
// rejected ones are counted and dropped. Protocol code is unchanged, and the same layer runs in
// every binding: live it enforces the checks on real bytes; in the simulator it also charges the
// envelope's bytes (they are real) and, through `sign_cost`/`verify_cost`, the CPU time of signing
// and verifying (measured by BM_Auth*).
//
// The CPU cost is a queue per direction: an envelope is handed to the inner environment (or its
// payload to the services) when this peer's signing (verifying) of everything before it is done,
// so messages keep their order, and a link failure waits behind the messages that preceded it.
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/auth/authenticator.h"
#include "core/env.h"
#include "core/forwarding_environment.h"

namespace swarmlab::core::auth {

struct AuthenticatedEnvironmentOptions {
  // The public key of each peer of the collaboration (the binding's directory, like its address
  // book); nullopt: unknown, and a send to it is dropped and counted.
  std::function<std::optional<PublicKey>(PeerId)> key_of;
  double unix_origin_s = 0;  // Unix time at now() == 0 (tokens and envelopes carry Unix time)
  // Seconds of CPU to seal / open an envelope of `payload_bytes`; null: none (live mode, where the
  // real work takes the real time).
  std::function<Seconds(std::size_t payload_bytes)> sign_cost, verify_cost;
};

class AuthenticatedEnvironment final : public ForwardingEnvironment, public Service {
 public:
  AuthenticatedEnvironment(Environment& inner, Authenticator& authenticator, AuthenticatedEnvironmentOptions options);
  ~AuthenticatedEnvironment() override;

  void send(PeerId to, Message message) override;
  void set_pacing(PeerId to, double bits_per_s) override { inner_.set_pacing(to, bits_per_s); }
  void set_sink(Service* sink) override { sink_ = sink; }

  // The inner environment delivers here.
  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  // Sends dropped because the receiver's key is unknown, and messages from peers whose key is
  // unknown (the authenticator counts its own rejections).
  std::uint64_t unknown_peers() const { return unknown_peers_; }

 private:
  // Runs `fn` when this peer's CPU queue `busy_until` has done `cost` more seconds of work.
  void after_work(Seconds& busy_until, Seconds cost, std::function<void()> fn);
  // Opens an envelope and hands its payload to the sink.
  void deliver(PeerId from, const Message& message);

  Authenticator& auth_;
  AuthenticatedEnvironmentOptions options_;
  Service* sink_ = nullptr;
  Seconds sign_busy_until_ = 0, verify_busy_until_ = 0;
  std::uint64_t unknown_peers_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// One peer process's authentication, as every binding holds it: its authenticator and the
// environment its services run on.
class AuthenticatedPeer {
 public:
  AuthenticatedPeer(Environment& inner, Authenticator authenticator, AuthenticatedEnvironmentOptions options)
      : authenticator_(std::move(authenticator)), env_(inner, authenticator_, std::move(options)) {}
  AuthenticatedEnvironment& env() { return env_; }
  const AuthenticatedEnvironment& env() const { return env_; }
  const Authenticator& authenticator() const { return authenticator_; }
  Authenticator& authenticator() { return authenticator_; }

 private:
  Authenticator authenticator_;
  AuthenticatedEnvironment env_;
};

}  // namespace swarmlab::core::auth
