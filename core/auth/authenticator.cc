#include "core/auth/authenticator.h"

#include <cmath>
#include <stdexcept>

namespace swarmlab::core::auth {
namespace {

constexpr std::string_view kEnvelopeTagText = "swarmlab envelope v1";

void put(Hasher& h, std::uint64_t v) {
  std::uint8_t b[8];
  std::memcpy(b, &v, 8);
  h.add(b);
}

}  // namespace

const char* name(Rejection r) {
  switch (r) {
    case Rejection::Malformed: return "malformed";
    case Rejection::WrongReceiver: return "wrong receiver";
    case Rejection::BadToken: return "bad token";
    case Rejection::TokenExpired: return "token expired";
    case Rejection::WrongSender: return "wrong sender";
    case Rejection::ClockSkew: return "clock skew";
    case Rejection::BadSignature: return "bad signature";
    case Rejection::Replayed: return "replayed";
    case Rejection::Overloaded: return "overloaded";
  }
  return "?";
}

std::size_t envelope_overhead(std::size_t user_bytes) {
  // tag, token (varint length + user + key + expiration + signature), receiver, time, nonce, signature
  return 1 + (1 + user_bytes + 32 + 8 + 64) + 32 + 8 + 16 + 64;
}

Envelope decode_envelope(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  if (r.u8() != kEnvelopeTag) throw DecodeError("envelope: wrong tag");
  Envelope e;
  e.token = decode_token(r);
  const auto receiver = r.raw(32);
  std::copy(receiver.begin(), receiver.end(), e.receiver.begin());
  e.time_s = r.f64();
  if (!std::isfinite(e.time_s)) throw DecodeError("envelope: time is not finite");
  e.incarnation = r.u64();
  e.counter = r.u64();
  const auto sig = r.raw(64);
  std::copy(sig.begin(), sig.end(), e.signature.begin());
  e.payload = r.raw(r.remaining());
  return e;
}

Authenticator::Authenticator(PublicKey authority, KeyPair own, AccessToken token, std::uint64_t incarnation, AuthOptions options)
    : authority_(authority),
      own_(own),
      incarnation_(incarnation),
      options_(options),
      scheme_(options.envelope_signatures ? options.envelope_signatures : &ed25519()) {
  if (!(options_.nonce_memory_s > options_.max_skew_s) || !(options_.max_skew_s > 0))
    throw std::invalid_argument("auth: nonce_memory_s must exceed max_skew_s > 0 (else old envelopes could be replayed)");
  replace_token(std::move(token));
}

void Authenticator::replace_token(AccessToken token) {
  if (token.peer_key != own_.public_key) throw std::invalid_argument("auth: the token is for another peer key");
  token_ = std::move(token);
  token_bytes_ = encode_token(token_);
}

Digest Authenticator::digest(const std::vector<std::uint8_t>& token_bytes, const PublicKey& receiver, double time_s,
                             std::uint64_t incarnation, std::uint64_t counter, std::uint64_t virtual_bytes,
                             std::span<const std::uint8_t> payload) const {
  Hasher h;
  h.add({reinterpret_cast<const std::uint8_t*>(kEnvelopeTagText.data()), kEnvelopeTagText.size()});
  h.add(token_bytes).add(receiver);
  std::uint64_t t;
  std::memcpy(&t, &time_s, 8);
  put(h, t);
  put(h, incarnation);
  put(h, counter);
  put(h, virtual_bytes);
  h.add(payload);
  return h.finish();
}

std::vector<std::uint8_t> Authenticator::seal(const PublicKey& receiver, std::span<const std::uint8_t> payload,
                                              std::uint64_t virtual_bytes, double now_s) {
  const std::uint64_t counter = ++counter_;
  const Digest d = digest(token_bytes_, receiver, now_s, incarnation_, counter, virtual_bytes, payload);
  const Signature s = scheme_->sign(own_, d);
  std::vector<std::uint8_t> out;
  out.reserve(envelope_overhead(token_.user.size()) + payload.size());
  Writer w(out);
  w.u8(kEnvelopeTag);
  w.raw(token_bytes_);
  w.raw(receiver);
  w.f64(now_s);
  w.u64(incarnation_);
  w.u64(counter);
  w.raw(s);
  w.raw(payload);
  return out;
}

Authenticator::Opened Authenticator::reject(Rejection r) {
  ++rejected_[static_cast<std::size_t>(r)];
  return Opened{r, {}, {}};
}

std::uint64_t Authenticator::rejected_total() const {
  std::uint64_t n = 0;
  for (auto v : rejected_) n += v;
  return n;
}

void Authenticator::forget_before(double now_s) {
  for (auto it = seen_.begin(); it != seen_.end();)
    it = it->second.last_s < now_s - options_.nonce_memory_s ? seen_.erase(it) : std::next(it);
}

Authenticator::Opened Authenticator::open(std::span<const std::uint8_t> bytes, std::uint64_t virtual_bytes, double now_s,
                                         const PublicKey& sender) {
  Envelope e;
  try {
    e = decode_envelope(bytes);
  } catch (const DecodeError&) {
    return reject(Rejection::Malformed);
  }
  if (e.receiver != own_.public_key) return reject(Rejection::WrongReceiver);
  // The token's encoding as received (its user name may be of any valid length).
  const std::vector<std::uint8_t> token_bytes = encode_token(e.token);
  // A sender repeats its token in every envelope: its authority signature is checked once.
  auto known = verified_tokens_.find(e.token.peer_key);
  if (known == verified_tokens_.end() || known->second != token_bytes) {
    if (!e.token.signed_by(authority_)) return reject(Rejection::BadToken);
    if (verified_tokens_.size() >= options_.max_senders) verified_tokens_.clear();
    verified_tokens_[e.token.peer_key] = token_bytes;
  }
  if (!(now_s < e.token.expiration_s)) return reject(Rejection::TokenExpired);
  if (e.token.peer_key != sender) return reject(Rejection::WrongSender);
  if (!(std::abs(e.time_s - now_s) <= options_.max_skew_s)) return reject(Rejection::ClockSkew);
  const Digest d = digest(token_bytes, e.receiver, e.time_s, e.incarnation, e.counter, virtual_bytes, e.payload);
  if (!scheme_->verify(e.token.peer_key, d, e.signature)) return reject(Rejection::BadSignature);
  const auto key = std::make_pair(e.token.peer_key, e.incarnation);
  auto it = seen_.find(key);
  if (it == seen_.end()) {
    if (seen_.size() >= options_.max_senders) forget_before(now_s);
    if (seen_.size() >= options_.max_senders) return reject(Rejection::Overloaded);
    it = seen_.emplace(key, Seen{}).first;
  } else if (e.counter <= it->second.counter) {
    return reject(Rejection::Replayed);
  }
  it->second.counter = e.counter;
  it->second.last_s = now_s;
  ++accepted_;
  return Opened{std::nullopt, e.payload, e.token.peer_key};
}

}  // namespace swarmlab::core::auth
