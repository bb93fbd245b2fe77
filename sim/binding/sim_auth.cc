#include "sim/binding/sim_auth.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace swarmlab::sim {
namespace {

using namespace core::auth;

// A key seed from the scenario's seed and a label: BLAKE2b of both.
KeySeed derive_seed(std::uint64_t seed, std::uint64_t label) {
  std::uint8_t bytes[16];
  std::memcpy(bytes, &seed, 8);
  std::memcpy(bytes + 8, &label, 8);
  Hasher h;
  h.add(bytes);
  return h.finish();
}

Signature keyed_hash(const KeyPair& key, std::span<const std::uint8_t> message) {
  Signature s{};
  for (std::uint8_t half = 0; half < 2; ++half) {
    Hasher h;
    const std::uint8_t domain[1] = {half};
    h.add(domain).add(std::span(key.secret_key).first(32)).add(message);
    const Digest d = h.finish();
    std::copy(d.begin(), d.end(), s.begin() + 32 * half);
  }
  return s;
}

}  // namespace

void KeyedHashSignatures::add(const KeyPair& key) { keys_[key.public_key] = key; }

Signature KeyedHashSignatures::sign(const KeyPair& key, std::span<const std::uint8_t> message) const {
  return keyed_hash(key, message);
}

bool KeyedHashSignatures::verify(const PublicKey& key, std::span<const std::uint8_t> message, const Signature& signature) const {
  const auto it = keys_.find(key);
  return it != keys_.end() && keyed_hash(it->second, message) == signature;
}

SimAuth::SimAuth(const scenarios::AuthSpec& spec, std::size_t peers, std::uint64_t seed)
    : spec_(spec), authority_(keypair_from_seed(derive_seed(seed, ~std::uint64_t{0}))), incarnations_(peers, 0) {
  // Tokens outlive any simulated run (durations are at most 10^8 s).
  const double expiration = kUnixOrigin + 2e8;
  for (std::size_t i = 0; i < peers; ++i) {
    keys_.push_back(keypair_from_seed(derive_seed(seed, i)));
    signatures_.add(keys_.back());
    tokens_.push_back(issue_token(authority_, "peer-" + std::to_string(i), keys_.back().public_key, expiration));
  }
}

std::unique_ptr<AuthenticatedPeer> SimAuth::authenticate(core::PeerId peer, core::Environment& inner) {
  const std::uint64_t incarnation = (static_cast<std::uint64_t>(peer) << 32) | ++incarnations_.at(peer);
  AuthOptions ao;
  ao.envelope_signatures = &signatures_;
  Authenticator authenticator(authority_.public_key, keys_[peer], tokens_[peer], incarnation, ao);
  AuthenticatedEnvironmentOptions o;
  o.key_of = [this](core::PeerId p) -> std::optional<PublicKey> {
    if (p >= keys_.size()) return std::nullopt;
    return keys_[p].public_key;
  };
  o.unix_origin_s = kUnixOrigin;
  const scenarios::AuthSpec s = spec_;
  o.sign_cost = [s](std::size_t bytes) { return s.sign_s + s.sign_s_per_byte * static_cast<double>(bytes); };
  o.verify_cost = [s](std::size_t bytes) { return s.verify_s + s.verify_s_per_byte * static_cast<double>(bytes); };
  return std::make_unique<AuthenticatedPeer>(inner, std::move(authenticator), std::move(o));
}

}  // namespace swarmlab::sim
