// The live transport between in-process peers on one event loop, and what it does with garbage.
#include "exec/tcp_transport.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "exec/frame_reader.h"
#include "exec/handshake.h"
#include "loopback_listener.h"

namespace swarmlab::exec {
namespace {

using testing::listening_socket;

struct Received {
  core::PeerId from;
  std::vector<std::uint8_t> bytes;
};

// n peers on one loop; `client[i]` makes peer i client-mode. bootstrap > 0: each peer is given only
// the first `bootstrap` peers' addresses and its own, and discovers the rest.
struct Swarm {
  explicit Swarm(std::vector<bool> client, double handshake_timeout = 5, std::uint64_t max_message = core::kMaxMessageBytes,
                 std::size_t bootstrap = 0)
      : received(client.size()), failures(client.size()) {
    const std::size_t n = client.size();
    std::vector<int> fds(n, -1);
    addresses.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (client[i]) continue;
      std::uint16_t port = 0;
      fds[i] = listening_socket(port);
      addresses[i] = SocketAddress::loopback(port);
    }
    for (std::size_t i = 0; i < n; ++i) {
      TcpTransport::Options o;
      o.self = static_cast<core::PeerId>(i);
      o.addresses = addresses;
      if (bootstrap > 0) {
        o.discover = true;
        for (std::size_t j = bootstrap; j < n; ++j)
          if (j != i) o.addresses[j].reset();
      }
      o.listen_fd = fds[i];
      o.network = 42;
      o.handshake_timeout_s = handshake_timeout;
      o.connect_timeout_s = 2;
      o.redial_interval_s = 0.05;
      o.max_message_bytes = max_message;
      nodes.push_back(std::make_unique<TcpTransport>(
          loop, o, [this, i](core::PeerId from, core::Message m) { received[i].push_back({from, std::move(m.bytes)}); },
          [this, i](core::PeerId peer) { failures[i].push_back(peer); }));
    }
    for (auto& t : nodes) t->start();
  }
  bool run_until(const std::function<bool()>& done, double timeout = 10) { return loop.run_until(done, timeout); }

  EventLoop loop;
  std::vector<std::optional<SocketAddress>> addresses;
  std::vector<std::vector<Received>> received;
  std::vector<std::vector<core::PeerId>> failures;
  std::vector<std::unique_ptr<TcpTransport>> nodes;
};

core::Message message_of(std::size_t size, std::uint8_t seed) {
  core::Message m;
  m.bytes.resize(size);
  for (std::size_t i = 0; i < size; ++i) m.bytes[i] = static_cast<std::uint8_t>(seed + i * 31);
  return m;
}

// A raw client socket connected to `addr`, from `source` (any 127.x.y.z is this host) when given.
int raw_connect(const SocketAddress& addr, const char* source = nullptr) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (source) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, source, &from.sin_addr);
    EXPECT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from), 0);
  }
  const sockaddr_in sa = addr.to_sockaddr();
  EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa), 0);
  return fd;
}

// Whether the transport closed the raw socket (recv sees end of stream or a reset).
bool closed_by_peer(Swarm& s, int fd, double timeout) {
  bool closed = false;
  s.run_until([&] {
    char c;
    const ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
    closed = r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    return closed;
  }, timeout);
  return closed;
}

TEST(TcpTransport, MessagesArriveWholeAndInOrderBothWays) {
  Swarm s({false, false, false});
  const std::vector<std::size_t> sizes = {0, 1, 1000, 5 << 20, 17, 3 << 20};
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    s.nodes[0]->send(2, message_of(sizes[k], static_cast<std::uint8_t>(k)));  // 0 accepts from 2: waits for its dial
    s.nodes[2]->send(0, message_of(sizes[k], static_cast<std::uint8_t>(k + 100)));
    s.nodes[1]->send(2, message_of(sizes[k], static_cast<std::uint8_t>(k + 50)));
  }
  ASSERT_TRUE(s.run_until([&] { return s.received[2].size() == 2 * sizes.size() && s.received[0].size() == sizes.size(); }));
  std::size_t from0 = 0, from1 = 0;
  for (const auto& r : s.received[2]) {
    const std::size_t k = r.from == 0 ? from0++ : from1++;
    EXPECT_EQ(r.bytes, message_of(sizes[k], static_cast<std::uint8_t>(r.from == 0 ? k : k + 50)).bytes);
  }
  for (std::size_t k = 0; k < sizes.size(); ++k)
    EXPECT_EQ(s.received[0][k].bytes, message_of(sizes[k], static_cast<std::uint8_t>(k + 100)).bytes);
  for (const auto& f : s.failures) EXPECT_TRUE(f.empty());
  EXPECT_EQ(s.nodes[0]->queued_bytes(), 0u);
}

TEST(TcpTransport, PeersGivenOneAddressLearnEveryOtherAndTalk) {
  // Peers 1-4 know only peer 0 (and themselves); peer 4 is client-mode. Every peer sends to every
  // other: the messages wait until the address arrives (from a Hello or a directory frame).
  Swarm s({false, false, false, false, true}, 5, core::kMaxMessageBytes, 1);
  const std::size_t n = s.nodes.size();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && !(s.addresses[i] == std::nullopt && s.addresses[j] == std::nullopt))
        s.nodes[i]->send(static_cast<core::PeerId>(j), message_of(100, static_cast<std::uint8_t>(i * 8 + j)));
  ASSERT_TRUE(s.run_until([&] {
    for (std::size_t j = 0; j < n; ++j)
      if (s.received[j].size() < n - 1) return false;
    return true;
  }));
  for (std::size_t j = 0; j < n; ++j) {
    EXPECT_TRUE(s.failures[j].empty()) << "peer " << j;
    for (const Received& r : s.received[j]) EXPECT_EQ(r.bytes, message_of(100, static_cast<std::uint8_t>(r.from * 8 + j)).bytes);
    for (std::size_t k = 0; k < n; ++k)
      if (k != j) EXPECT_EQ(s.nodes[j]->address_of(static_cast<core::PeerId>(k)), s.addresses[k]) << j << " about " << k;
  }
  EXPECT_GT(s.nodes[3]->stats().addresses_learned, 0u);
}

TEST(TcpTransport, ClientModePeerDialsAndIsAnsweredOnItsConnection) {
  Swarm s({false, true});
  EXPECT_TRUE(s.nodes[1]->dials(0));
  EXPECT_FALSE(s.nodes[0]->dials(1));
  s.nodes[1]->send(0, message_of(10, 1));
  ASSERT_TRUE(s.run_until([&] { return s.received[0].size() == 1; }));
  s.nodes[0]->send(1, message_of(20, 2));
  ASSERT_TRUE(s.run_until([&] { return s.received[1].size() == 1; }));
  EXPECT_EQ(s.received[1][0].bytes.size(), 20u);
}

TEST(TcpTransport, TwoClientModePeersCannotTalkAndSayIt) {
  Swarm s({false, true, true});
  s.nodes[1]->send(2, message_of(10, 1));
  ASSERT_TRUE(s.run_until([&] { return !s.failures[1].empty(); }, 2));
  EXPECT_EQ(s.failures[1][0], 2u);
}

TEST(TcpTransport, VirtualPayloadsAndUnknownPeersAreRefused) {
  Swarm s({false, false});
  core::Message m;
  m.virtual_bytes = 100;
  EXPECT_THROW(s.nodes[0]->send(1, m), std::invalid_argument);
  EXPECT_THROW(s.nodes[0]->send(5, message_of(1, 1)), std::out_of_range);
  EXPECT_THROW(s.nodes[0]->send(0, message_of(1, 1)), std::out_of_range);
}

TEST(TcpTransport, RandomBytesAreDroppedAndThePeerKeepsWorking) {
  Swarm s({false, false});
  std::mt19937 gen(3);
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int fd = raw_connect(*s.addresses[0]);
    std::vector<std::uint8_t> junk(1 + gen() % 300);
    for (auto& b : junk) b = static_cast<std::uint8_t>(gen());
    junk[0] = 10;  // a plausible small length, so the garbage is a frame that fails the handshake
    junk[1] = junk[2] = junk[3] = 0;
    ASSERT_GT(send(fd, junk.data(), junk.size(), MSG_NOSIGNAL), 0);
    EXPECT_TRUE(closed_by_peer(s, fd, 2));
    close(fd);
  }
  EXPECT_GE(s.nodes[0]->stats().rejected_connections, 5u);
  s.nodes[1]->send(0, message_of(1000, 9));
  ASSERT_TRUE(s.run_until([&] { return s.received[0].size() == 1; }));
  EXPECT_TRUE(s.failures[0].empty());
}

TEST(TcpTransport, HugeLengthPrefixIsRejectedAtOnce) {
  Swarm s({false, false});
  const int fd = raw_connect(*s.addresses[0]);
  const std::uint8_t huge[] = {0xFF, 0xFF, 0xFF, 0xFF, 1, 2, 3};
  ASSERT_GT(send(fd, huge, sizeof huge, MSG_NOSIGNAL), 0);
  EXPECT_TRUE(closed_by_peer(s, fd, 1));
  close(fd);
  EXPECT_EQ(s.nodes[0]->stats().rejected_connections, 1u);
}

TEST(TcpTransport, HalfOpenSocketIsClosedAfterTheHandshakeTimeout) {
  Swarm s({false, false}, /*handshake_timeout=*/0.2);
  const int silent = raw_connect(*s.addresses[0]);
  const int partial = raw_connect(*s.addresses[0]);
  const std::uint8_t two[] = {20, 0};  // half a frame header, then nothing
  ASSERT_EQ(send(partial, two, 2, MSG_NOSIGNAL), 2);
  EXPECT_TRUE(closed_by_peer(s, silent, 2));
  EXPECT_TRUE(closed_by_peer(s, partial, 2));
  close(silent);
  close(partial);
  EXPECT_EQ(s.nodes[0]->stats().rejected_connections, 2u);
  s.nodes[1]->send(0, message_of(5, 5));
  ASSERT_TRUE(s.run_until([&] { return s.received[0].size() == 1; }));
}

// Someone without credentials holds 100 silent sockets on a peer's port from one host (here
// 127.0.0.2) and reopens each as soon as it is closed. That host fills at most its own share of
// the unidentified slots (16 of 64 by default), so a peer that restarts meanwhile gets back in at
// once, instead of after the handshake timeout (5 s) frees a slot.
TEST(TcpTransport, ARestartedPeerRejoinsWithinASecondWhileSilentSocketsAreRefilled) {
  EventLoop loop;
  std::vector<std::optional<SocketAddress>> addresses(2);
  std::uint16_t port = 0;
  const int listen_fd = listening_socket(port);
  addresses[0] = SocketAddress::loopback(port);
  auto options = [&](core::PeerId self) {
    TcpTransport::Options o;
    o.self = self;
    o.addresses = addresses;
    o.network = 42;
    o.redial_interval_s = 0.05;
    return o;
  };
  TcpTransport::Options o0 = options(0);
  o0.listen_fd = listen_fd;
  std::size_t received = 0;
  TcpTransport acceptor(loop, o0, [&](core::PeerId, core::Message) { ++received; }, [](core::PeerId) {});
  acceptor.start();
  auto peer1 = std::make_unique<TcpTransport>(loop, options(1), [](core::PeerId, core::Message) {}, [](core::PeerId) {});
  peer1->start();
  peer1->send(0, message_of(5, 5));
  ASSERT_TRUE(loop.run_until([&] { return received == 1; }, 2.0));

  // The refiller: non-blocking connects, so a full accept queue never stalls the loop.
  auto silent_connect = [&] {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in from{};
    from.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.2", &from.sin_addr);
    EXPECT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from), 0);
    const sockaddr_in sa = addresses[0]->to_sockaddr();
    connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
    return fd;
  };
  std::vector<int> silent(100);
  for (int& fd : silent) fd = silent_connect();
  std::size_t reopened = 0;
  std::function<void()> refill = [&] {
    for (int& fd : silent) {
      char c;
      const ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN)) {
        close(fd);
        fd = silent_connect();
        ++reopened;
      }
    }
    loop.schedule(0.01, refill);
  };
  loop.schedule(0, refill);
  loop.run_until([] { return false; }, 0.5);  // the slots fill, and every refused socket comes back
  EXPECT_GT(reopened, 100u);

  peer1.reset();  // the peer restarts with the same identity
  peer1 = std::make_unique<TcpTransport>(loop, options(1), [](core::PeerId, core::Message) {}, [](core::PeerId) {});
  peer1->start();
  const double restarted = loop.now();
  peer1->send(0, message_of(6, 6));
  EXPECT_TRUE(loop.run_until([&] { return received == 2; }, 1.0)) << "still out after " << loop.now() - restarted << " s";
  for (int fd : silent) close(fd);
}

TEST(TcpTransport, HandshakeForAnotherRunOrPeerIsRejected) {
  Swarm s({false, false, false});
  auto try_hello = [&](Handshake h) {
    const int fd = raw_connect(*s.addresses[0]);
    const auto body = encode_handshake(h);
    const auto header = frame_header(static_cast<std::uint32_t>(body.size()));
    send(fd, header.data(), header.size(), MSG_NOSIGNAL);
    send(fd, body.data(), body.size(), MSG_NOSIGNAL);
    const bool closed = closed_by_peer(s, fd, 2);
    close(fd);
    return closed;
  };
  EXPECT_TRUE(try_hello({HandshakeKind::Hello, 43, 1, 0}));  // another run
  EXPECT_TRUE(try_hello({HandshakeKind::Hello, 42, 1, 2}));  // meant for peer 2
  EXPECT_TRUE(try_hello({HandshakeKind::Hello, 42, 0, 0}));  // claims to be peer 0 itself
  EXPECT_TRUE(try_hello({HandshakeKind::Ack, 42, 1, 0}));    // not a Hello
  EXPECT_EQ(s.nodes[0]->stats().rejected_connections, 4u);
}

TEST(TcpTransport, OversizedFrameFromAPeerBreaksOnlyThatConnection) {
  Swarm s({false, false}, 5, /*max_message=*/4096);
  // Peer 1's own limit forbids sending above 4096, so write the frame behind its back: a raw
  // dialer that identifies as peer 1, then sends a frame over peer 0's limit.
  const int fd = raw_connect(*s.addresses[0]);
  const auto body = encode_handshake({HandshakeKind::Hello, 42, 1, 0});
  const auto header = frame_header(static_cast<std::uint32_t>(body.size()));
  std::vector<std::uint8_t> bytes(header.begin(), header.end());
  bytes.insert(bytes.end(), body.begin(), body.end());
  const auto big = frame_header(5000);
  bytes.insert(bytes.end(), big.begin(), big.end());
  ASSERT_GT(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), 0);
  EXPECT_TRUE(closed_by_peer(s, fd, 2));
  close(fd);
  EXPECT_EQ(s.nodes[0]->stats().broken_frames, 1u);
  // The real peer 1 reconnects (it dials 0) and traffic flows again.
  s.nodes[1]->send(0, message_of(100, 1));
  ASSERT_TRUE(s.run_until([&] { return s.received[0].size() == 1; }));
}

// A peer that dies is reported; a send to it while it is down is refused at once (the accepting
// side does not hold it for whoever dials next: that would be its restarted successor, which never
// asked for it), and once it is back, messages flow again.
TEST(TcpTransport, APeerThatGoesAwayIsReportedAndCanComeBack) {
  Swarm s({false, false});
  s.nodes[1]->send(0, message_of(10, 1));
  ASSERT_TRUE(s.run_until([&] { return s.received[0].size() == 1; }));
  s.nodes[1].reset();  // the process "dies": its sockets close
  ASSERT_TRUE(s.run_until([&] { return !s.failures[0].empty(); }, 2));
  EXPECT_EQ(s.failures[0][0], 1u);
  // Three sends while it is down: one refusal reported within a turn of the loop, nothing kept
  // (the accept wait is 30 s).
  for (std::uint8_t seed = 0; seed < 3; ++seed) s.nodes[0]->send(1, message_of(10, seed));
  ASSERT_TRUE(s.run_until([&] { return s.failures[0].size() == 2; }, 1));
  EXPECT_EQ(s.failures[0][1], 1u);
  EXPECT_EQ(s.nodes[0]->queued_bytes(), 0u);
  // A new incarnation of peer 1 at the same address... peer 1 dials, so it needs no listener.
  TcpTransport::Options o;
  o.self = 1;
  o.addresses = s.addresses;
  o.network = 42;
  o.listen_fd = -1;
  o.addresses[1].reset();  // as a client-mode peer: nothing to bind
  s.nodes[1] = std::make_unique<TcpTransport>(
      s.loop, o, [&](core::PeerId from, core::Message m) { s.received[1].push_back({from, std::move(m.bytes)}); },
      [&](core::PeerId p) { s.failures[1].push_back(p); });
  s.nodes[1]->start();
  ASSERT_TRUE(s.run_until([&] { return s.nodes[0]->connected(1); }));
  s.nodes[0]->send(1, message_of(10, 7));
  ASSERT_TRUE(s.run_until([&] { return s.received[1].size() == 1; }));
  EXPECT_EQ(s.received[1][0].bytes, message_of(10, 7).bytes);  // not one meant for its predecessor
  EXPECT_EQ(s.failures[0].size(), 2u);
}

TEST(TcpTransport, AcceptingSideGivesUpWhenNobodyDials) {
  // Peer 1 would dial 0, but it does not exist: 0's message waits accept_wait, then fails.
  EventLoop loop;
  std::uint16_t port = 0;
  const int fd = listening_socket(port);
  std::uint16_t unused = 0;
  const int other = listening_socket(unused);
  TcpTransport::Options o;
  o.self = 0;
  o.addresses = {SocketAddress::loopback(port), SocketAddress::loopback(unused)};
  o.listen_fd = fd;
  o.network = 1;
  o.accept_wait_s = 0.2;
  std::vector<core::PeerId> failures;
  TcpTransport t(loop, o, [](core::PeerId, core::Message) {}, [&](core::PeerId p) { failures.push_back(p); });
  t.start();
  t.send(1, message_of(10, 1));
  EXPECT_TRUE(loop.run_until([&] { return !failures.empty(); }, 3));
  EXPECT_EQ(t.queued_bytes(), 0u);
  close(other);
}

TEST(TcpTransport, PacingLimitsAConnection) {
  Swarm s({false, false});
  s.nodes[1]->send(0, message_of(10, 1));
  ASSERT_TRUE(s.run_until([&] { return s.received[0].size() == 1; }));
  s.nodes[1]->set_pacing(0, 4e6);  // 4 MB/s
  const double start = s.loop.now();
  s.nodes[1]->send(0, message_of(2 << 20, 2));
  ASSERT_TRUE(s.run_until([&] { return s.received[0].size() == 2; }));
  // 2 MiB at 4 MB/s takes about 0.52 s; only a lower bound is robust on a busy machine.
  EXPECT_GT(s.loop.now() - start, 0.35);
}

}  // namespace
}  // namespace swarmlab::exec
