#include "core/auth/signing.h"

#include <sodium.h>

#include <stdexcept>

namespace swarmlab::core::auth {
namespace {

void ensure_sodium() {
  static const bool ready = sodium_init() >= 0;
  if (!ready) throw std::runtime_error("libsodium could not be initialised");
}

}  // namespace

static_assert(sizeof(crypto_generichash_state) <= 384, "Hasher::state_ too small for this libsodium");
static_assert(crypto_sign_PUBLICKEYBYTES == 32 && crypto_sign_SECRETKEYBYTES == 64 && crypto_sign_BYTES == 64);

KeyPair keypair_from_seed(const KeySeed& seed) {
  ensure_sodium();
  KeyPair k;
  crypto_sign_seed_keypair(k.public_key.data(), k.secret_key.data(), seed.data());
  return k;
}

Signature sign(const KeyPair& key, std::span<const std::uint8_t> message) {
  ensure_sodium();
  Signature s;
  crypto_sign_detached(s.data(), nullptr, message.data(), message.size(), key.secret_key.data());
  return s;
}

bool verify(const PublicKey& key, std::span<const std::uint8_t> message, const Signature& signature) {
  ensure_sodium();
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(), key.data()) == 0;
}

const SignatureScheme& ed25519() {
  struct Ed25519 final : SignatureScheme {
    Signature sign(const KeyPair& key, std::span<const std::uint8_t> message) const override {
      return auth::sign(key, message);
    }
    bool verify(const PublicKey& key, std::span<const std::uint8_t> message, const Signature& signature) const override {
      return auth::verify(key, message, signature);
    }
  };
  static const Ed25519 scheme;
  return scheme;
}

Hasher::Hasher() {
  ensure_sodium();
  crypto_generichash_init(reinterpret_cast<crypto_generichash_state*>(state_.data()), nullptr, 0, 32);
}

Hasher& Hasher::add(std::span<const std::uint8_t> bytes) {
  crypto_generichash_update(reinterpret_cast<crypto_generichash_state*>(state_.data()), bytes.data(), bytes.size());
  return *this;
}

Digest Hasher::finish() {
  Digest d;
  crypto_generichash_final(reinterpret_cast<crypto_generichash_state*>(state_.data()), d.data(), d.size());
  return d;
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

template <std::size_t N>
std::optional<std::array<std::uint8_t, N>> from_hex(std::string_view hex) {
  if (hex.size() != 2 * N) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::array<std::uint8_t, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

template std::optional<std::array<std::uint8_t, 32>> from_hex<32>(std::string_view);
template std::optional<std::array<std::uint8_t, 64>> from_hex<64>(std::string_view);

}  // namespace swarmlab::core::auth
