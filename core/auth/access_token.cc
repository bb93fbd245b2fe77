#include "core/auth/access_token.h"

#include <cmath>
#include <stdexcept>

namespace swarmlab::core::auth {
namespace {

constexpr std::string_view kTokenTag = "swarmlab access token v1";

}  // namespace

bool valid_user_name(std::string_view user) {
  if (user.empty() || user.size() > kMaxUserBytes) return false;
  for (char c : user)
    if (c < 0x21 || c > 0x7e) return false;
  return true;
}

std::vector<std::uint8_t> AccessToken::signed_bytes() const {
  std::vector<std::uint8_t> out;
  Writer w(out);
  w.str(kTokenTag);
  w.str(user);
  w.raw(peer_key);
  w.f64(expiration_s);
  return out;
}

bool AccessToken::signed_by(const PublicKey& authority) const { return verify(authority, signed_bytes(), signature); }

AccessToken issue_token(const KeyPair& authority, std::string user, const PublicKey& peer_key, double expiration_s) {
  if (!valid_user_name(user))
    throw std::invalid_argument("access token: user name '" + user + "' is not 1 to 64 printable ASCII characters");
  if (!std::isfinite(expiration_s)) throw std::invalid_argument("access token: expiration is not finite");
  AccessToken t;
  t.user = std::move(user);
  t.peer_key = peer_key;
  t.expiration_s = expiration_s;
  t.signature = sign(authority, t.signed_bytes());
  return t;
}

void encode_token(Writer& w, const AccessToken& token) {
  w.str(token.user);
  w.raw(token.peer_key);
  w.f64(token.expiration_s);
  w.raw(token.signature);
}

AccessToken decode_token(Reader& r) {
  AccessToken t;
  t.user = r.str(kMaxUserBytes);
  if (!valid_user_name(t.user)) throw DecodeError("access token: invalid user name");
  const auto key = r.raw(t.peer_key.size());
  std::copy(key.begin(), key.end(), t.peer_key.begin());
  t.expiration_s = r.f64();
  if (!std::isfinite(t.expiration_s)) throw DecodeError("access token: expiration is not finite");
  const auto sig = r.raw(t.signature.size());
  std::copy(sig.begin(), sig.end(), t.signature.begin());
  return t;
}

std::vector<std::uint8_t> encode_token(const AccessToken& token) {
  std::vector<std::uint8_t> out;
  Writer w(out);
  encode_token(w, token);
  return out;
}

AccessToken decode_token(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  AccessToken t = decode_token(r);
  r.finish();
  return t;
}

}  // namespace swarmlab::core::auth
