// Allowlist authentication: tokens, envelopes (every rejection reason), and the environment layer
// with a DHT on top, where a peer without the authority's token cannot join.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <vector>

#include "core/auth/access_token.h"
#include "core/auth/authenticated_environment.h"
#include "core/auth/authenticator.h"
#include "core/dht/node.h"
#include "core/service_mux.h"
#include "support/memory_world.h"
#include "support/moving_clock_environment.h"
#include "support/recording_service.h"

namespace swarmlab::core::auth {
namespace {

KeySeed seed_of(std::uint8_t n) {
  KeySeed s{};
  s.fill(n);
  return s;
}

const KeyPair kAuthority = keypair_from_seed(seed_of(200));
const KeyPair kImpostorAuthority = keypair_from_seed(seed_of(201));
constexpr double kT0 = 1.8e9;  // Unix seconds, 2027
const std::vector<std::uint8_t> kPayload = {2, 7, 1, 8, 2, 8};

KeyPair peer_key(std::uint8_t n) { return keypair_from_seed(seed_of(n)); }
Authenticator peer_auth(std::uint8_t n, double expiration = kT0 + 3600, std::uint64_t incarnation = 1,
                        const KeyPair& authority = kAuthority, AuthOptions options = {}) {
  const KeyPair k = peer_key(n);
  return Authenticator(kAuthority.public_key, k, issue_token(authority, "user" + std::to_string(n), k.public_key, expiration),
                       incarnation, options);
}

TEST(AccessToken, SignedByTheAuthorityOnlyAndRoundTrips) {
  const AccessToken t = issue_token(kAuthority, "alice", peer_key(1).public_key, kT0);
  EXPECT_TRUE(t.signed_by(kAuthority.public_key));
  EXPECT_FALSE(t.signed_by(kImpostorAuthority.public_key));
  EXPECT_EQ(decode_token(encode_token(t)), t);
  AccessToken changed = t;
  changed.user = "mallory";
  EXPECT_FALSE(changed.signed_by(kAuthority.public_key));
  changed = t;
  changed.expiration_s += 1;
  EXPECT_FALSE(changed.signed_by(kAuthority.public_key));
  changed = t;
  changed.peer_key = peer_key(2).public_key;
  EXPECT_FALSE(changed.signed_by(kAuthority.public_key));
}

TEST(AccessToken, BadNamesAndBytesAreRefused) {
  EXPECT_THROW(issue_token(kAuthority, "", peer_key(1).public_key, kT0), std::invalid_argument);
  EXPECT_THROW(issue_token(kAuthority, "two words", peer_key(1).public_key, kT0), std::invalid_argument);
  EXPECT_THROW(issue_token(kAuthority, std::string(65, 'a'), peer_key(1).public_key, kT0), std::invalid_argument);
  const auto bytes = encode_token(issue_token(kAuthority, "alice", peer_key(1).public_key, kT0));
  for (std::size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_THROW(decode_token(std::span(bytes).first(cut)), DecodeError) << cut;
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_THROW(decode_token(longer), DecodeError);
}

TEST(Authenticator, AGenuineEnvelopeOpensToItsPayload) {
  Authenticator a = peer_auth(1), b = peer_auth(2);
  const auto sealed = a.seal(b.public_key(), kPayload, 0, kT0);
  EXPECT_EQ(sealed.size(), kPayload.size() + envelope_overhead(5));
  const auto opened = b.open(sealed, 0, kT0 + 0.5, a.public_key());
  ASSERT_FALSE(opened.rejection);
  EXPECT_EQ(std::vector<std::uint8_t>(opened.payload.begin(), opened.payload.end()), kPayload);
  EXPECT_EQ(opened.sender, a.public_key());
  EXPECT_EQ(b.accepted(), 1u);
}

// One test per reason a receiver rejects an envelope.
TEST(Authenticator, EveryRejectionReason) {
  Authenticator a = peer_auth(1), b = peer_auth(2), c = peer_auth(3);
  auto rejection = [&](Authenticator& to, const std::vector<std::uint8_t>& bytes, double now, std::uint64_t virt = 0,
                       std::optional<PublicKey> from = std::nullopt) {
    if (!from) {
      try {
        from = decode_envelope(bytes).token.peer_key;  // the directory agrees with the token
      } catch (const DecodeError&) {
        from = PublicKey{};
      }
    }
    return to.open(bytes, virt, now, *from).rejection;
  };
  // Malformed: random bytes, and every truncation of a genuine envelope's header.
  EXPECT_EQ(rejection(b, {0xA1, 3, 'x'}, kT0), Rejection::Malformed);
  const auto genuine = a.seal(b.public_key(), kPayload, 0, kT0);
  for (std::size_t cut = 0; cut < genuine.size() - kPayload.size(); ++cut)
    EXPECT_EQ(rejection(b, {genuine.begin(), genuine.begin() + static_cast<long>(cut)}, kT0), Rejection::Malformed) << cut;
  // WrongReceiver: sealed for b, shown to c (a replay to another peer).
  EXPECT_EQ(rejection(c, genuine, kT0), Rejection::WrongReceiver);
  // BadToken: an unlisted peer signs its own token.
  Authenticator unlisted = peer_auth(4, kT0 + 3600, 1, kImpostorAuthority);
  EXPECT_EQ(rejection(b, unlisted.seal(b.public_key(), kPayload, 0, kT0), kT0), Rejection::BadToken);
  // TokenExpired: at and after the expiration.
  Authenticator expiring = peer_auth(5, kT0 + 10);
  EXPECT_FALSE(rejection(b, expiring.seal(b.public_key(), kPayload, 0, kT0 + 9), kT0 + 9.9));
  EXPECT_EQ(rejection(b, expiring.seal(b.public_key(), kPayload, 0, kT0 + 10), kT0 + 10), Rejection::TokenExpired);
  // WrongSender: a's genuine envelope arriving on another peer's connection.
  EXPECT_EQ(rejection(b, a.seal(b.public_key(), kPayload, 0, kT0), kT0, 0, c.public_key()), Rejection::WrongSender);
  // ClockSkew: more than 60 s either way.
  EXPECT_EQ(rejection(b, a.seal(b.public_key(), kPayload, 0, kT0 - 61), kT0), Rejection::ClockSkew);
  EXPECT_EQ(rejection(b, a.seal(b.public_key(), kPayload, 0, kT0 + 61), kT0), Rejection::ClockSkew);
  EXPECT_FALSE(rejection(b, a.seal(b.public_key(), kPayload, 0, kT0 - 59), kT0));
  // BadSignature: a payload byte changed, the virtual size changed, another key's signature.
  auto tampered = a.seal(b.public_key(), kPayload, 0, kT0);
  tampered.back() ^= 1;
  EXPECT_EQ(rejection(b, tampered, kT0), Rejection::BadSignature);
  EXPECT_EQ(rejection(b, a.seal(b.public_key(), kPayload, 100, kT0), kT0, 101), Rejection::BadSignature);
  // A peer that copies a's valid token but signs with its own key.
  Authenticator thief(kAuthority.public_key, peer_key(9), issue_token(kAuthority, "user9", peer_key(9).public_key, kT0 + 60), 1);
  auto stolen = a.seal(b.public_key(), kPayload, 0, kT0);
  const auto forged = thief.seal(b.public_key(), kPayload, 0, kT0);
  const std::size_t sig_at = forged.size() - kPayload.size() - 64;
  std::copy(forged.begin() + static_cast<long>(sig_at), forged.begin() + static_cast<long>(sig_at + 64),
            stolen.begin() + static_cast<long>(stolen.size() - kPayload.size() - 64));
  EXPECT_EQ(rejection(b, stolen, kT0), Rejection::BadSignature);
  // Replayed: the same envelope twice, and an older one after a newer.
  const auto first = a.seal(b.public_key(), kPayload, 0, kT0);
  const auto second = a.seal(b.public_key(), kPayload, 0, kT0);
  EXPECT_FALSE(rejection(b, first, kT0));
  EXPECT_FALSE(rejection(b, second, kT0));
  EXPECT_EQ(rejection(b, second, kT0), Rejection::Replayed);
  EXPECT_EQ(rejection(b, first, kT0), Rejection::Replayed);
  // Each reason was counted.
  for (Rejection r : {Rejection::WrongReceiver, Rejection::BadToken, Rejection::TokenExpired, Rejection::WrongSender, Rejection::ClockSkew,
                      Rejection::BadSignature, Rejection::Replayed})
    EXPECT_GE(b.rejected(r) + c.rejected(r), 1u) << name(r);
}

TEST(Authenticator, ARestartedSenderIsANewIncarnationNotAReplay) {
  Authenticator b = peer_auth(2);
  Authenticator before = peer_auth(1, kT0 + 3600, /*incarnation=*/11);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(b.open(before.seal(b.public_key(), kPayload, 0, kT0), 0, kT0, peer_key(1).public_key).rejection);
  Authenticator after = peer_auth(1, kT0 + 3600, /*incarnation=*/12);  // its counter starts again at 1
  EXPECT_FALSE(b.open(after.seal(b.public_key(), kPayload, 0, kT0 + 1), 0, kT0 + 1, peer_key(1).public_key).rejection);
}

TEST(Authenticator, SenderMemoryIsBoundedAndForgetsOnlyWhatTheSkewWindowCovers) {
  AuthOptions o;
  o.max_senders = 2;
  Authenticator b = peer_auth(2, kT0 + 3600, 1, kAuthority, o);
  Authenticator x = peer_auth(1, kT0 + 3600, 1), y = peer_auth(1, kT0 + 3600, 2), z = peer_auth(1, kT0 + 3600, 3);
  EXPECT_FALSE(b.open(x.seal(b.public_key(), kPayload, 0, kT0), 0, kT0, peer_key(1).public_key).rejection);
  EXPECT_FALSE(b.open(y.seal(b.public_key(), kPayload, 0, kT0), 0, kT0, peer_key(1).public_key).rejection);
  EXPECT_EQ(b.open(z.seal(b.public_key(), kPayload, 0, kT0), 0, kT0, peer_key(1).public_key).rejection, Rejection::Overloaded);
  // After nonce_memory_s the old entries go, and with them nothing that could still be replayed.
  EXPECT_FALSE(b.open(z.seal(b.public_key(), kPayload, 0, kT0 + 200), 0, kT0 + 200, peer_key(1).public_key).rejection);
}

TEST(Authenticator, ARefreshedTokenKeepsThePeerTalkingPastTheOldExpiration) {
  Authenticator a = peer_auth(1, kT0 + 10), b = peer_auth(2);
  a.replace_token(issue_token(kAuthority, "user1", a.public_key(), kT0 + 100));
  EXPECT_FALSE(b.open(a.seal(b.public_key(), kPayload, 0, kT0 + 50), 0, kT0 + 50, peer_key(1).public_key).rejection);
  EXPECT_THROW(a.replace_token(issue_token(kAuthority, "user1", peer_key(7).public_key, kT0 + 100)), std::invalid_argument);
}

// --- The environment layer -------------------------------------------------------------------------

using Recorder = testing::RecordingService;

// n peers in a MemoryWorld; peer `unlisted` (if any) holds a token it signed itself. With
// `clock_step`, each peer's clock moves by that much at every read, as live mode's does.
struct AuthWorld {
  AuthWorld(std::size_t n, std::optional<PeerId> unlisted = std::nullopt, AuthenticatedEnvironmentOptions extra = {},
            Seconds clock_step = 0)
      : world(n, testing::PeerSpec{0.01, 0, 0}) {
    for (PeerId i = 0; i < n; ++i) keys.push_back(peer_key(static_cast<std::uint8_t>(i + 1)));
    for (PeerId i = 0; i < n; ++i)
      if (clock_step > 0) clocks.push_back(std::make_unique<testing::MovingClockEnvironment>(world.env(i), clock_step));
    for (PeerId i = 0; i < n; ++i) {
      const KeyPair& issuer = unlisted == i ? kImpostorAuthority : kAuthority;
      auths.push_back(std::make_unique<Authenticator>(
          kAuthority.public_key, keys[i], issue_token(issuer, "peer" + std::to_string(i), keys[i].public_key, kT0 + 3600), i + 1));
      AuthenticatedEnvironmentOptions o = extra;
      o.key_of = [this](PeerId p) { return std::optional<PublicKey>(keys.at(p).public_key); };
      o.unix_origin_s = kT0;
      Environment& inner = clocks.empty() ? world.env(i) : *clocks[i];
      envs.push_back(std::make_unique<AuthenticatedEnvironment>(inner, *auths[i], o));
    }
  }
  testing::MemoryWorld world;
  std::vector<std::unique_ptr<testing::MovingClockEnvironment>> clocks;
  std::vector<KeyPair> keys;
  std::vector<std::unique_ptr<Authenticator>> auths;
  std::vector<std::unique_ptr<AuthenticatedEnvironment>> envs;
};

Message message_of(std::vector<std::uint8_t> bytes, std::uint64_t virtual_bytes = 0) {
  Message m;
  m.bytes = std::move(bytes);
  m.virtual_bytes = virtual_bytes;
  return m;
}

TEST(AuthenticatedEnvironment, ServicesSeeTheirOwnBytesInOrderAndTheWireCarriesTheEnvelope) {
  AuthWorld w(2);
  Recorder r;
  w.envs[1]->set_sink(&r);
  for (std::uint8_t i = 0; i < 5; ++i) w.envs[0]->send(1, message_of({1, i}, 1000));
  w.world.run();
  ASSERT_EQ(r.got.size(), 5u);
  for (std::uint8_t i = 0; i < 5; ++i) EXPECT_EQ(r.got[i].second, (std::vector<std::uint8_t>{1, i}));
  EXPECT_EQ(w.world.bytes_sent(0), 5 * (kFrameHeaderBytes + 2 + 1000 + envelope_overhead(5)));
  EXPECT_EQ(w.auths[1]->accepted(), 5u);
}

TEST(AuthenticatedEnvironment, AnUnlistedPeersMessagesNeverReachTheServices) {
  AuthWorld w(3, /*unlisted=*/2);
  Recorder r;
  w.envs[0]->set_sink(&r);
  w.envs[2]->send(0, message_of({1, 2, 3}));
  w.envs[1]->send(0, message_of({4}));
  w.world.run();
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].first, 1u);
  EXPECT_EQ(w.auths[0]->rejected(Rejection::BadToken), 1u);
}

TEST(AuthenticatedEnvironment, AGenuineEnvelopeForwardedByAnotherPeerIsRefused) {
  AuthWorld w(3);
  Recorder r;
  w.envs[0]->set_sink(&r);
  // Peer 2 captures peer 1's envelope to 0 and sends it on its own connection first.
  w.world.on_send = [&](PeerId from, PeerId to, const Message& m) {
    if (from == 1 && to == 0) w.world.env(2).send(0, m);
  };
  w.envs[1]->send(0, message_of({9}));
  w.world.run();
  ASSERT_EQ(r.got.size(), 1u);  // the genuine one, from 1; the copy from 2 is refused
  EXPECT_EQ(r.got[0].first, 1u);
  EXPECT_EQ(w.auths[0]->rejected(Rejection::WrongSender), 1u);
}

TEST(AuthenticatedEnvironment, SigningAndVerifyingCostsAreChargedInOrder) {
  AuthenticatedEnvironmentOptions costs;
  costs.sign_cost = [](std::size_t bytes) { return 0.001 + 1e-6 * static_cast<double>(bytes); };
  costs.verify_cost = [](std::size_t bytes) { return 0.002 + 1e-6 * static_cast<double>(bytes); };
  AuthWorld w(2, std::nullopt, costs);
  struct Timed final : Service {
    Environment* env = nullptr;
    std::vector<Seconds> at;
    void handle(PeerId, const Message&) override { at.push_back(env->now()); }
    void on_link_failure(PeerId) override {}
  } t;
  t.env = w.envs[1].get();
  w.envs[1]->set_sink(&t);
  w.envs[0]->send(1, message_of({1}, 9999));  // 10 kB: 11 ms to sign, 12 ms to verify
  w.envs[0]->send(1, message_of({2}));        // ~1 ms, ~2 ms
  w.world.run();
  // First: signed by 11 ms, 20 ms on the path, verified (envelope included) 12.x ms later. Second:
  // signed 1 ms after the first, so it arrives while the first is being verified, and waits.
  const double overhead = static_cast<double>(envelope_overhead(5));
  ASSERT_EQ(t.at.size(), 2u);
  const double first = 0.011 + 0.020 + 0.002 + 1e-6 * (10000 + overhead);
  EXPECT_NEAR(t.at[0], first, 1e-9);
  EXPECT_NEAR(t.at[1], first + 0.002 + 1e-6 * (1 + overhead), 1e-9);
}

// Live mode's clock moves while a handler runs. Signing and verifying costs shorter than it moves
// between two reads still queue up: the CPU queue is a deadline, never a delay taken against a
// later read (which came out negative here, and throws in every binding).
TEST(AuthenticatedEnvironment, CostsShorterThanTheClockMovesWithinAHandlerStillQueue) {
  AuthenticatedEnvironmentOptions costs;
  costs.sign_cost = [](std::size_t) { return 1e-4; };
  costs.verify_cost = [](std::size_t) { return 1e-4; };
  AuthWorld w(2, std::nullopt, costs, /*clock_step=*/1e-3);
  Recorder r;
  w.envs[1]->set_sink(&r);
  for (std::uint8_t i = 0; i < 5; ++i) ASSERT_NO_THROW(w.envs[0]->send(1, message_of({i})));
  ASSERT_NO_THROW(w.world.run());
  ASSERT_EQ(r.got.size(), 5u);
  for (std::uint8_t i = 0; i < 5; ++i) EXPECT_EQ(r.got[i].second, (std::vector<std::uint8_t>{i}));
}

TEST(AuthenticatedEnvironment, ALinkFailureWaitsBehindTheMessagesBeforeIt) {
  AuthenticatedEnvironmentOptions costs;
  costs.verify_cost = [](std::size_t) { return 0.05; };
  AuthWorld w(2, std::nullopt, costs);
  Recorder r;
  w.envs[1]->set_sink(&r);
  std::size_t delivered_before_failure = 99;
  struct Order final : Service {
    Recorder* r;
    std::size_t* before;
    void handle(PeerId f, const Message& m) override { r->handle(f, m); }
    void on_link_failure(PeerId p) override {
      *before = r->got.size();
      r->on_link_failure(p);
    }
  } order;
  order.r = &r;
  order.before = &delivered_before_failure;
  w.envs[1]->set_sink(&order);
  for (std::uint8_t i = 0; i < 3; ++i) w.envs[0]->send(1, message_of({i}));
  w.world.run_until(0.021);  // all three arrived, none verified yet
  w.world.set_down(0);
  w.world.run();
  EXPECT_EQ(r.got.size(), 3u);
  EXPECT_EQ(delivered_before_failure, 3u);
}

TEST(AuthenticatedEnvironment, ADhtOfListedPeersFormsAndAnUnlistedPeerCannotJoin) {
  AuthWorld w(6, /*unlisted=*/5);
  std::vector<std::unique_ptr<dht::DhtNode>> nodes;
  std::vector<std::unique_ptr<ServiceMux>> muxes;
  for (PeerId i = 0; i < 6; ++i) {
    nodes.push_back(std::make_unique<dht::DhtNode>(*w.envs[i], dht::NodeId::random(w.envs[i]->rng())));
    muxes.push_back(std::make_unique<ServiceMux>());
    muxes.back()->add(ServiceId::Dht, *nodes.back());
    w.envs[i]->set_sink(muxes.back().get());
  }
  std::vector<std::optional<bool>> joined(6);
  nodes[0]->bootstrap({}, [&](bool ok) { joined[0] = ok; });
  for (PeerId i = 1; i < 6; ++i) w.world.at(0.05 * i, [&, i] { nodes[i]->bootstrap({0}, [&, i](bool ok) { joined[i] = ok; }); });
  w.world.run_until(10);
  for (PeerId i = 1; i < 5; ++i) EXPECT_EQ(joined[i], std::optional<bool>(true)) << i;
  EXPECT_EQ(joined[5], std::optional<bool>(false));
  // The listed peers store and find a value; none of them ever learnt of the unlisted one.
  std::optional<bool> stored;
  nodes[1]->store("k", dht::Bytes{4, 2}, 600, [&](const dht::StoreResult& r) { stored = r.ok; });
  w.world.run_until(12);
  ASSERT_EQ(stored, std::optional<bool>(true));
  std::optional<dht::Bytes> found;
  nodes[4]->get("k", [&](std::optional<dht::Record> r, const dht::LookupStats&) { if (r) found = r->value().value; });
  w.world.run_until(14);
  EXPECT_EQ(found, std::optional<dht::Bytes>(dht::Bytes{4, 2}));
  for (PeerId i = 0; i < 5; ++i) EXPECT_GE(w.auths[i]->rejected(Rejection::BadToken), i == 0 ? 1u : 0u) << i;
  for (PeerId i = 0; i < 5; ++i) EXPECT_LE(nodes[i]->health().entries, 4u) << i;
}

}  // namespace
}  // namespace swarmlab::core::auth
