#pragma once
// The allowlist authentication in the simulator (docs/trust.md §1): the core's layer
// (core/auth/authenticated_environment.h) over each simulated peer's environment, with keys, an
// authority and tokens derived from the scenario's seed, so a run stays deterministic. Every
// message carries a real envelope (its bytes travel and every check runs), and the CPU time of
// sealing and opening it is charged as the scenario's "auth" section says (measured for Ed25519 by
// BM_AuthSeal / BM_AuthOpen); the envelopes' own signatures are KeyedHashSignatures.
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "core/auth/authenticated_environment.h"
#include "core/env.h"
#include "scenarios/scenario.h"

namespace swarmlab::sim {


// The simulator's envelope signatures: a keyed BLAKE2b of the message under the signer's secret
// seed, checked by recomputing it. Same size as Ed25519's and the same verdicts (only the key's
// holder can produce one; any change to the message or key fails), at a fraction of the simulator's
// CPU: the simulated time of signing and verifying is charged separately, as measured for Ed25519.
class KeyedHashSignatures final : public core::auth::SignatureScheme {
 public:
  void add(const core::auth::KeyPair& key);
  core::auth::Signature sign(const core::auth::KeyPair& key, std::span<const std::uint8_t> message) const override;
  bool verify(const core::auth::PublicKey& key, std::span<const std::uint8_t> message,
              const core::auth::Signature& signature) const override;

 private:
  std::map<core::auth::PublicKey, core::auth::KeyPair> keys_;
};

class SimAuth {
 public:
  SimAuth(const scenarios::AuthSpec& spec, std::size_t peers, std::uint64_t seed);

  // A new process of `peer` on `inner`: a fresh incarnation, so its nonces never repeat its
  // predecessor's.
  std::unique_ptr<core::auth::AuthenticatedPeer> authenticate(core::PeerId peer, core::Environment& inner);

  // The Unix time of the simulation's zero (tokens and envelopes carry Unix time).
  static constexpr double kUnixOrigin = 1.8e9;

 private:
  scenarios::AuthSpec spec_;
  KeyedHashSignatures signatures_;
  core::auth::KeyPair authority_;
  std::vector<core::auth::KeyPair> keys_;
  std::vector<core::auth::AccessToken> tokens_;
  std::vector<std::uint64_t> incarnations_;
};

}  // namespace swarmlab::sim
