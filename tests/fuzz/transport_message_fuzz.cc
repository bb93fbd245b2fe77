// libFuzzer target for the live transport's connection handling (tests/fuzz/run_fuzz.sh
// transport): what a stranger sends on a fresh TCP connection, over real loopback sockets.
//
// Two transports share one event loop: peer 0 accepts, and peer 1 dials it and stays connected.
// Each input is sent to peer 0 on a new connection, which is then half-closed. The bytes may be
// anything: garbage, a length prefix over the handshake limit, a Hello for another run or peer, or
// a valid Hello from peer 1 followed by frames (then peer 0 takes the stranger for a restarted
// peer 1 and replaces its connection). Whatever arrives, peer 0 must close the stranger's
// connection as soon as it ends (within 1 s, well before the 5 s handshake timeout would), and
// then still take a genuine message from peer 1 (which redials if its connection was replaced).
// Nothing may throw; sanitizers catch the rest. The decoders behind it have their own target
// (live_message_fuzz.cc).
//
// Built with -DTRANSPORT_FUZZ_MAKE_CORPUS it is instead a program that writes the seed corpus.
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "exec/frame_reader.h"
#include "exec/handshake.h"
#include "exec/tcp_transport.h"
#include "tests/exec/loopback_listener.h"

namespace {

using namespace swarmlab;

constexpr std::uint64_t kNetwork = 42;

struct World {
  World() {
    std::uint16_t port = 0;
    const int listen_fd = exec::testing::listening_socket(port);
    address = exec::SocketAddress::loopback(port);
    std::uint16_t port1 = 0;
    const int listen_fd1 = exec::testing::listening_socket(port1);
    for (core::PeerId self : {0u, 1u}) {
      exec::TcpTransport::Options o;
      o.self = self;
      o.addresses = {address, exec::SocketAddress::loopback(port1)};
      o.listen_fd = self == 0 ? listen_fd : listen_fd1;
      o.network = kNetwork;
      o.handshake_timeout_s = 5;  // longer than a stranger is given to be closed (1 s)
      o.connect_timeout_s = 1;
      o.redial_interval_s = 0.01;
      o.max_message_bytes = 1 << 16;
      peers.push_back(std::make_unique<exec::TcpTransport>(
          loop, o,
          [this, self](core::PeerId from, core::Message m) {
            if (self == 0 && from == 1 && m.bytes == genuine) ++genuine_received;
          },
          [this, self](core::PeerId) { failures += self == 1 ? 1 : 0; }));
    }
    for (auto& p : peers) p->start();
  }

  exec::EventLoop loop;
  exec::SocketAddress address;
  std::vector<std::unique_ptr<exec::TcpTransport>> peers;
  std::vector<std::uint8_t> genuine;
  int genuine_received = 0;
  int failures = 0;  // link failures peer 1 heard of
};

World& world() {
  static World w;
  return w;
}

// A blocking connect that libFuzzer's timer signal may interrupt: then it completes on its own.
int connect_to(const exec::SocketAddress& address) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in sa = address.to_sockaddr();
  if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return fd;
  if (fd >= 0 && errno == EINTR) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof error;
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0) return fd;
  }
  std::perror("stranger: connect");
  std::abort();
}

// A connection to peer 0 that sends `bytes` and half-closes; true once peer 0 has closed it.
bool stranger_is_closed(World& w, const std::uint8_t* data, std::size_t size) {
  const int fd = connect_to(w.address);
  for (std::size_t sent = 0; sent < size;) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::perror("stranger: send");
      std::abort();
    }
    sent += static_cast<std::size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  // Watched on the loop, so that the loop wakes when peer 0 answers or closes.
  bool closed = false;
  const exec::EventLoop::WatchId watch = w.loop.watch(fd, EPOLLIN, [&](std::uint32_t) {
    std::uint8_t buffer[256];
    // An Ack, or a frame for "peer 1", may come first: read on until the end of the stream.
    const ssize_t r = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    closed = closed || r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  });
  w.loop.run_until([&] { return closed; }, 1);
  w.loop.unwatch(watch);
  const linger reset{1, 0};  // no TIME_WAIT: thousands of connections a minute
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  return closed;
}

// Peer 1's message reaches peer 0 (peer 1 retries after a link failure while it redials).
bool genuine_message_arrives(World& w) {
  static std::uint8_t counter = 0;
  w.genuine = {0x5a, ++counter, 0xa5};
  const int before = w.genuine_received;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int failures = w.failures;
    w.peers[1]->send(0, core::Message{w.genuine, 0});
    w.loop.run_until([&] { return w.genuine_received > before || w.failures > failures; }, 3);
    if (w.genuine_received > before) return true;
  }
  return false;
}

}  // namespace

#ifndef TRANSPORT_FUZZ_MAKE_CORPUS

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  World& w = world();
  if (!stranger_is_closed(w, data, size)) {
    std::fprintf(stderr, "peer 0 did not close the stranger's connection\n");
    std::abort();
  }
  if (!genuine_message_arrives(w)) {
    std::fprintf(stderr, "peer 1's message did not reach peer 0\n");
    std::abort();
  }
  return 0;
}

#else

#include <string>

#include "tests/fuzz/corpus_writer.h"

// Streams as a stranger might send them: framed Hellos (genuine for peer 1, another run, another
// peer) with and without frames after them, a length over the handshake limit, and garbage.
int main(int argc, char** argv) {
  swarmlab::fuzz::CorpusWriter corpus(argc, argv);
  if (!corpus.ok()) return 2;
  auto hello = [](std::uint64_t network, core::PeerId from, core::PeerId to) {
    std::vector<std::uint8_t> stream;
    exec::append_frame(stream, exec::encode_handshake({exec::HandshakeKind::Hello, network, from, to}));
    return stream;
  };
  corpus.write("hello_peer1", hello(kNetwork, 1, 0));
  std::vector<std::uint8_t> with_frames = hello(kNetwork, 1, 0);
  exec::append_frame(with_frames, std::vector<std::uint8_t>{1, 2, 3});
  exec::append_frame(with_frames, {});
  corpus.write("hello_peer1_then_frames", with_frames);
  corpus.write("hello_other_run", hello(kNetwork + 1, 1, 0));
  corpus.write("hello_other_peer", hello(kNetwork, 0, 1));
  corpus.write("huge_length", {0xff, 0xff, 0xff, 0x7f, 1, 2});
  corpus.write("garbage", {10, 0, 0, 0, 0xde, 0xad, 0xbe, 0xef});
  return corpus.done();
}

#endif
