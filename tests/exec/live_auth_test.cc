// The allowlist authentication over real sockets (docs/trust.md §1): LiveEnvironments on loopback
// TCP, each behind the core's authenticating layer, as `swarmlab peer --auth-*` runs them. An
// unlisted peer cannot join the DHT, a captured request sent again is refused, and a token stops
// being accepted once it expires.
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "core/auth/authenticated_environment.h"
#include "core/dht/node.h"
#include "core/service_mux.h"
#include "exec/auth_files.h"
#include "exec/event_loop.h"
#include "exec/live_environment.h"
#include "exec/token_refresher.h"
#include "loopback_listener.h"

namespace swarmlab::exec {
namespace {

using namespace core::auth;


using testing::listening_socket;

// What the wire delivered to a peer, before its authenticating layer sees it.
struct Tap final : core::Service {
  core::Service* next = nullptr;
  std::vector<std::pair<core::PeerId, core::Message>> seen;
  void handle(core::PeerId from, const core::Message& m) override {
    seen.emplace_back(from, m);
    next->handle(from, m);
  }
  void on_link_failure(core::PeerId p) override { next->on_link_failure(p); }
};

struct Received final : core::Service {
  std::vector<std::pair<core::PeerId, std::vector<std::uint8_t>>> got;
  void handle(core::PeerId from, const core::Message& m) override { got.emplace_back(from, m.bytes); }
  void on_link_failure(core::PeerId) override {}
};

// n peers on loopback; `unlisted` holds a token from an authority of its own; `expiry[i]`
// (seconds from now) shortens a peer's token.
struct AuthPeers {
  AuthPeers(std::size_t n, std::optional<std::size_t> unlisted = std::nullopt, std::vector<double> expiry = {}) {
    expiry.resize(n, 3600);
    const KeyPair rogue = generate_key_pair();
    std::vector<int> fds(n);
    std::vector<std::optional<SocketAddress>> addresses(n);
    std::vector<std::optional<PublicKey>> directory;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint16_t port = 0;
      fds[i] = listening_socket(port);
      addresses[i] = SocketAddress::loopback(port);
      keys.push_back(generate_key_pair());
      directory.push_back(keys.back().public_key);
    }
    for (std::size_t i = 0; i < n; ++i) {
      TcpTransport::Options t;
      t.self = static_cast<core::PeerId>(i);
      t.addresses = addresses;
      t.listen_fd = fds[i];
      t.network = 7;
      LiveEnvironmentOptions e;
      e.seed = 3;
      live.push_back(std::make_unique<LiveEnvironment>(loop, t, e));
      const KeyPair& signer = i == unlisted ? rogue : authority;
      auths.push_back(std::make_unique<Authenticator>(
          authority.public_key, keys[i], issue_token(signer, "peer-" + std::to_string(i), keys[i].public_key, EventLoop::unix_seconds() + expiry[i]),
          100 + i));
      AuthenticatedEnvironmentOptions o;
      o.key_of = [directory](core::PeerId p) { return p < directory.size() ? directory[p] : std::nullopt; };
      o.unix_origin_s = EventLoop::unix_seconds() - loop.now();
      envs.push_back(std::make_unique<AuthenticatedEnvironment>(*live.back(), *auths.back(), o));
      taps.push_back(std::make_unique<Tap>());
      taps.back()->next = envs.back().get();
      live.back()->set_sink(taps.back().get());
    }
    for (auto& l : live) l->start();
  }
  core::Message message(std::vector<std::uint8_t> bytes) {
    core::Message m;
    m.bytes = std::move(bytes);
    return m;
  }
  EventLoop loop;
  KeyPair authority = generate_key_pair();
  std::vector<KeyPair> keys;
  std::vector<std::unique_ptr<LiveEnvironment>> live;
  std::vector<std::unique_ptr<Authenticator>> auths;
  std::vector<std::unique_ptr<AuthenticatedEnvironment>> envs;
  std::vector<std::unique_ptr<Tap>> taps;
};

TEST(LiveAuth, AnUnlistedPeerCannotJoinTheDht) {
  constexpr std::size_t n = 4, unlisted = 3;
  AuthPeers p(n, unlisted);
  std::vector<std::unique_ptr<core::dht::DhtNode>> nodes;
  std::vector<std::unique_ptr<core::ServiceMux>> muxes;
  for (std::size_t i = 0; i < n; ++i) {
    nodes.push_back(std::make_unique<core::dht::DhtNode>(*p.envs[i], core::dht::NodeId::random(p.envs[i]->rng())));
    muxes.push_back(std::make_unique<core::ServiceMux>());
    muxes.back()->add(core::ServiceId::Dht, *nodes.back());
    p.envs[i]->set_sink(muxes.back().get());
  }
  std::vector<std::optional<bool>> joined(n);
  nodes[0]->bootstrap({}, [&](bool ok) { joined[0] = ok; });
  for (std::size_t i = 1; i < n; ++i) nodes[i]->bootstrap({0}, [&, i](bool ok) { joined[i] = ok; });
  ASSERT_TRUE(p.loop.run_until([&] { return joined[1] && joined[2] && joined[unlisted]; }, 20));
  EXPECT_EQ(joined[1], std::optional<bool>(true));
  EXPECT_EQ(joined[2], std::optional<bool>(true));
  EXPECT_EQ(joined[unlisted], std::optional<bool>(false));
  EXPECT_GE(p.auths[0]->rejected(Rejection::BadToken), 1u);  // its requests, over a real connection
  // The listed peers store and find a value among themselves.
  std::optional<bool> stored;
  nodes[1]->store("k", core::dht::Bytes{4, 2}, 600, [&](const core::dht::StoreResult& r) { stored = r.ok; });
  ASSERT_TRUE(p.loop.run_until([&] { return stored.has_value(); }, 10));
  EXPECT_TRUE(*stored);
  std::optional<core::dht::Bytes> found;
  bool done = false;
  nodes[2]->get("k", [&](std::optional<core::dht::Record> r, const core::dht::LookupStats&) {
    if (r) found = r->value().value;
    done = true;
  });
  ASSERT_TRUE(p.loop.run_until([&] { return done; }, 10));
  EXPECT_EQ(found, std::optional<core::dht::Bytes>(core::dht::Bytes{4, 2}));
}

TEST(LiveAuth, ACapturedRequestSentAgainIsRefused) {
  AuthPeers p(3);
  Received r1, r2;
  p.envs[1]->set_sink(&r1);
  p.envs[2]->set_sink(&r2);
  p.envs[0]->send(1, p.message({1, 2, 3}));
  ASSERT_TRUE(p.loop.run_until([&] { return !r1.got.empty(); }, 10));
  ASSERT_EQ(p.taps[1]->seen.size(), 1u);
  const core::Message captured = p.taps[1]->seen[0].second;  // the envelope as it crossed the wire
  // Sent again on peer 0's own connection (bypassing its layer, as an attacker on the path would):
  p.live[0]->send(1, captured);
  // by another listed peer:
  p.live[2]->send(1, captured);
  // and to another receiver:
  p.live[0]->send(2, captured);
  ASSERT_TRUE(p.loop.run_until([&] { return p.auths[1]->rejected_total() == 2 && p.auths[2]->rejected_total() == 1; }, 10));
  EXPECT_EQ(p.auths[1]->rejected(Rejection::Replayed), 1u);
  EXPECT_EQ(p.auths[1]->rejected(Rejection::WrongSender), 1u);
  EXPECT_EQ(p.auths[2]->rejected(Rejection::WrongReceiver), 1u);
  EXPECT_EQ(r1.got.size(), 1u);
  EXPECT_TRUE(r2.got.empty());
  // A fresh request from peer 0 still goes through.
  p.envs[0]->send(1, p.message({4}));
  ASSERT_TRUE(p.loop.run_until([&] { return r1.got.size() == 2; }, 10));
}

TEST(LiveAuth, AnExpiredTokenStopsBeingAccepted) {
  AuthPeers p(2, std::nullopt, {1.5, 3600});
  Received r;
  p.envs[1]->set_sink(&r);
  p.envs[0]->send(1, p.message({1}));
  ASSERT_TRUE(p.loop.run_until([&] { return r.got.size() == 1; }, 10));
  p.loop.run_until([] { return false; }, 2.0);  // past the token's expiration
  p.envs[0]->send(1, p.message({2}));
  ASSERT_TRUE(p.loop.run_until([&] { return p.auths[1]->rejected_total() == 1; }, 10));
  EXPECT_EQ(p.auths[1]->rejected(Rejection::TokenExpired), 1u);
  EXPECT_EQ(r.got.size(), 1u);
  // The other direction, whose token is valid, still works.
  Received back;
  p.envs[0]->set_sink(&back);
  p.envs[1]->send(0, p.message({3}));
  ASSERT_TRUE(p.loop.run_until([&] { return back.got.size() == 1; }, 10));
}

// Token refresh (exec/token_refresher.h): the operator renames a newer token over the peer's token
// file before the old one expires, and the peer goes on being accepted past that expiry.
TEST(LiveAuth, ARefreshedTokenKeepsThePeerAcceptedPastTheOldExpiry) {
  AuthPeers p(2, std::nullopt, {2.0, 3600});
  char tmpl[] = "/tmp/swarmlab-token-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/peer-0.token";
  std::vector<std::string> lines;
  TokenRefresher refresher(p.loop, *p.auths[0], p.authority.public_key, path, 0.2,
                           [&](const std::string& line) { lines.push_back(line); });
  Received r;
  p.envs[1]->set_sink(&r);
  p.loop.run_until([] { return false; }, 0.5);  // no file yet: logged, the current token stays
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("keeping the current token"), std::string::npos) << lines.front();
  IssuedToken renewed;
  renewed.token = issue_token(p.authority, "peer-0", p.keys[0].public_key, EventLoop::unix_seconds() + 3600);
  renewed.authority = p.authority.public_key;
  save_token_file(path + ".new", renewed);
  ASSERT_EQ(std::rename((path + ".new").c_str(), path.c_str()), 0);
  p.loop.run_until([] { return false; }, 2.0);  // past the first token's expiry
  EXPECT_EQ(refresher.refreshed(), 1u);
  p.envs[0]->send(1, p.message({5}));
  ASSERT_TRUE(p.loop.run_until([&] { return r.got.size() == 1; }, 10));
  EXPECT_EQ(p.auths[1]->rejected_total(), 0u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace swarmlab::exec
