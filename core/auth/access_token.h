#pragma once
// An access token (docs/trust.md §1): the allowlist authority's signed statement that `user` may
// take part with the peer key `peer_key` until `expiration_s` (Unix seconds). Every envelope a peer
// sends carries its token, so a receiver needs only the authority's public key to check it.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/auth/signing.h"
#include "core/wire.h"

namespace swarmlab::core::auth {

inline constexpr std::size_t kMaxUserBytes = 64;

struct AccessToken {
  std::string user;
  PublicKey peer_key{};
  double expiration_s = 0;
  Signature signature{};  // the authority's, over signed_bytes()

  // What the authority signs: a domain tag, the user, the peer key and the expiration.
  std::vector<std::uint8_t> signed_bytes() const;
  bool signed_by(const PublicKey& authority) const;
  bool operator==(const AccessToken&) const = default;
};

// A user name the authority can issue for: 1 to kMaxUserBytes printable ASCII characters.
bool valid_user_name(std::string_view user);

// Throws std::invalid_argument for an invalid user name or a non-finite expiration.
AccessToken issue_token(const KeyPair& authority, std::string user, const PublicKey& peer_key, double expiration_s);

void encode_token(Writer& w, const AccessToken& token);
AccessToken decode_token(Reader& r);  // DecodeError on anything malformed (the signature is not checked)
std::vector<std::uint8_t> encode_token(const AccessToken& token);
AccessToken decode_token(std::span<const std::uint8_t> bytes);  // whole input, no trailing bytes

}  // namespace swarmlab::core::auth
