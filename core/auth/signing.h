#pragma once
// Ed25519 keys and signatures (libsodium) for the allowlist authentication of docs/trust.md. Keys
// come from 32-byte seeds so that a simulated run derives them from its seed and stays
// deterministic; fresh random seeds are the binding's business (the core reads no entropy).
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace swarmlab::core::auth {

using PublicKey = std::array<std::uint8_t, 32>;
using KeySeed = std::array<std::uint8_t, 32>;
using Signature = std::array<std::uint8_t, 64>;
using Digest = std::array<std::uint8_t, 32>;

struct KeyPair {
  PublicKey public_key{};
  std::array<std::uint8_t, 64> secret_key{};  // libsodium's form: seed followed by the public key
};

KeyPair keypair_from_seed(const KeySeed& seed);
Signature sign(const KeyPair& key, std::span<const std::uint8_t> message);
bool verify(const PublicKey& key, std::span<const std::uint8_t> message, const Signature& signature);

// How a peer's messages are signed and checked. Ed25519 (the functions above) wherever bytes are
// real; the simulator may substitute a cheaper scheme with the same sizes and the same verdicts and
// charge Ed25519's measured time instead (docs/trust.md §1).
class SignatureScheme {
 public:
  virtual ~SignatureScheme() = default;
  virtual Signature sign(const KeyPair& key, std::span<const std::uint8_t> message) const = 0;
  virtual bool verify(const PublicKey& key, std::span<const std::uint8_t> message, const Signature& signature) const = 0;
};
const SignatureScheme& ed25519();

// BLAKE2b-256 over several pieces, as if concatenated (the envelope signs a digest of its fields
// and payload, so a 64 MB payload is hashed in place rather than copied).
class Hasher {
 public:
  Hasher();
  Hasher& add(std::span<const std::uint8_t> bytes);
  Digest finish();

 private:
  alignas(64) std::array<std::uint8_t, 384> state_{};  // crypto_generichash_state
};

std::string to_hex(std::span<const std::uint8_t> bytes);
// nullopt unless `hex` is exactly 2·N hex digits.
template <std::size_t N>
std::optional<std::array<std::uint8_t, N>> from_hex(std::string_view hex);

}  // namespace swarmlab::core::auth
