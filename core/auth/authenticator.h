#pragma once
// Signed envelopes around a peer's messages (docs/trust.md §1). Every message a peer sends carries
// its access token, the receiver's public key, the send time, a nonce and the sender's signature
// over all of it and the payload; the receiver takes it only if
//   - the envelope decodes (Malformed),
//   - it names this peer's key as the receiver (WrongReceiver: it cannot be replayed to another),
//   - the token is signed by the authority (BadToken) and not expired (TokenExpired),
//   - the token's peer key is the one the receiver knows for the connection's peer (WrongSender: a
//     genuine envelope forwarded by another peer),
//   - the send time is within max_skew_s of the receiver's clock (ClockSkew),
//   - the signature is the token's peer key's (BadSignature),
//   - the nonce was not seen before (Replayed).
// Replies are envelopes too, so responses are checked the same way.
//
// The nonce is (incarnation, counter): a random 64-bit number the sending process draws once and a
// counter it increases with every envelope. Messages between two peers arrive in order, so a
// receiver keeps, per sender key and incarnation, only the highest counter it accepted: one entry
// per sending process instead of one per message, kept nonce_memory_s after its last use. A replay
// older than that fails the skew check, since nonce_memory_s > max_skew_s.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/auth/access_token.h"

namespace swarmlab::core::auth {

inline constexpr std::uint8_t kEnvelopeTag = 0xA1;  // first byte of every envelope (not a ServiceId)

enum class Rejection { Malformed, WrongReceiver, BadToken, TokenExpired, WrongSender, ClockSkew, BadSignature, Replayed, Overloaded };
inline constexpr std::size_t kRejectionKinds = 9;
const char* name(Rejection r);

struct AuthOptions {
  double max_skew_s = 60;         // hivemind: 1 min
  double nonce_memory_s = 180;    // hivemind: 3 min
  std::size_t max_senders = 4096; // (sender key, incarnation) entries kept; beyond, new ones wait
  const SignatureScheme* envelope_signatures = nullptr;  // null: Ed25519 (tokens are always Ed25519)
};

struct Envelope {
  AccessToken token;
  PublicKey receiver{};
  double time_s = 0;               // Unix seconds at sending
  std::uint64_t incarnation = 0;
  std::uint64_t counter = 0;
  Signature signature{};
  std::span<const std::uint8_t> payload;  // into the decoded bytes
};

// DecodeError unless `bytes` is a well-formed envelope (the signatures are not checked).
Envelope decode_envelope(std::span<const std::uint8_t> bytes);
// Bytes of an envelope beyond its payload, for a token of `user_bytes` user name.
std::size_t envelope_overhead(std::size_t user_bytes);

class Authenticator {
 public:
  // `incarnation`: drawn by the binding once per process (fresh entropy live, from the seed in the
  // simulator), so a restarted peer's nonces never repeat its predecessor's.
  Authenticator(PublicKey authority, KeyPair own, AccessToken token, std::uint64_t incarnation, AuthOptions options = {});

  // The envelope for `payload` to the peer whose key is `receiver`, sent at `now_s` (Unix s).
  // `virtual_bytes`: the simulator's size-only payload, bound into the signature.
  std::vector<std::uint8_t> seal(const PublicKey& receiver, std::span<const std::uint8_t> payload, std::uint64_t virtual_bytes,
                                 double now_s);

  struct Opened {
    std::optional<Rejection> rejection;    // nullopt: accepted
    std::span<const std::uint8_t> payload;  // into the input, when accepted
    PublicKey sender{};                     // the token's peer key, when accepted
  };
  // `sender`: the key of the peer the envelope came from, as far as the receiver knows it.
  Opened open(std::span<const std::uint8_t> bytes, std::uint64_t virtual_bytes, double now_s, const PublicKey& sender);

  // Token refresh: later envelopes carry `token` (same peer key, signed by the same authority).
  void replace_token(AccessToken token);
  const AccessToken& token() const { return token_; }
  const PublicKey& public_key() const { return own_.public_key; }

  std::uint64_t accepted() const { return accepted_; }
  std::uint64_t rejected(Rejection r) const { return rejected_[static_cast<std::size_t>(r)]; }
  std::uint64_t rejected_total() const;

 private:
  Digest digest(const std::vector<std::uint8_t>& token_bytes, const PublicKey& receiver, double time_s,
                std::uint64_t incarnation, std::uint64_t counter, std::uint64_t virtual_bytes,
                std::span<const std::uint8_t> payload) const;
  Opened reject(Rejection r);
  void forget_before(double now_s);

  PublicKey authority_;
  KeyPair own_;
  AccessToken token_;
  std::vector<std::uint8_t> token_bytes_;
  std::uint64_t incarnation_;
  std::uint64_t counter_ = 0;
  AuthOptions options_;
  const SignatureScheme* scheme_;
  struct Seen {
    std::uint64_t counter = 0;
    double last_s = 0;
  };
  std::map<std::pair<PublicKey, std::uint64_t>, Seen> seen_;
  std::map<PublicKey, std::vector<std::uint8_t>> verified_tokens_;  // per peer key, the token last found signed
  std::uint64_t accepted_ = 0;
  std::uint64_t rejected_[kRejectionKinds] = {};
};

}  // namespace swarmlab::core::auth
