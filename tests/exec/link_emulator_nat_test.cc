// Peers behind NAT in the emulated network (LinkEmulator, EmulatedLink::behind_nat), checked with
// real sockets in the namespaces: a NAT'd peer dials out and arrives from its router's public
// address; nobody can dial it, not even another NAT'd peer; teardown leaves no namespace behind.
#include "exec/link_emulator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "exec/socket_address.h"
#include "exec/system_command.h"

namespace swarmlab::exec {
namespace {

// A TCP socket in the network namespace at `netns_path`. A socket belongs to the namespace it was
// created in, whoever uses it later, and setns(CLONE_NEWNET) changes only the calling thread: so a
// short-lived thread enters the namespace and creates it, and this thread binds, dials and accepts.
int socket_in(const std::string& netns_path) {
  int fd = -1;
  std::thread([&] {
    const int ns = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) return;
    if (setns(ns, CLONE_NEWNET) == 0) fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    close(ns);
  }).join();
  return fd;
}

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) close(fd);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
};

constexpr std::uint32_t kAny = 0;

// A listener on 0.0.0.0:port in that namespace.
int listener_in(const std::string& netns_path, std::uint16_t port) {
  const int fd = socket_in(netns_path);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  const sockaddr_in sa = SocketAddress{kAny, port}.to_sockaddr();
  if (bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, 8) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

struct Dial {
  int fd = -1;    // connected socket, or -1
  int error = 0;  // errno of the failure; ETIMEDOUT when nothing answered in time
};

// Dials `to` from that namespace, waiting at most timeout_s.
Dial dial_from(const std::string& netns_path, SocketAddress to, double timeout_s) {
  Dial d;
  const int fd = socket_in(netns_path);
  if (fd < 0) return {-1, errno ? errno : EBADF};
  const sockaddr_in sa = to.to_sockaddr();
  if (connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
    d.error = errno;
    close(fd);
    return d;
  }
  pollfd p{fd, POLLOUT, 0};
  if (poll(&p, 1, static_cast<int>(timeout_s * 1000)) != 1) {
    close(fd);
    return {-1, ETIMEDOUT};
  }
  int err = 0;
  socklen_t len = sizeof err;
  getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    close(fd);
    return {-1, err};
  }
  d.fd = fd;
  return d;
}

// The connection waiting on `listener` within timeout_s: its fd and the dialer's address.
std::optional<std::pair<int, SocketAddress>> accept_within(int listener, double timeout_s) {
  pollfd p{listener, POLLIN, 0};
  if (poll(&p, 1, static_cast<int>(timeout_s * 1000)) != 1) return std::nullopt;
  sockaddr_in from{};
  socklen_t len = sizeof from;
  const int fd = accept4(listener, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC);
  if (fd < 0) return std::nullopt;
  return std::make_pair(fd, SocketAddress{ntohl(from.sin_addr.s_addr), ntohs(from.sin_port)});
}

SocketAddress local_of(int fd) {
  sockaddr_in sa{};
  socklen_t len = sizeof sa;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  return {ntohl(sa.sin_addr.s_addr), ntohs(sa.sin_port)};
}

// Bytes an htb class has sent ("Sent N bytes" of `tc -s class show`); -1 when not found.
long long class_bytes(const std::string& netns, const std::string& dev, const std::string& classid) {
  std::vector<std::string> argv{find_program("tc")};
  if (!netns.empty()) argv.insert(argv.end(), {"-n", netns});
  argv.insert(argv.end(), {"-s", "class", "show", "dev", dev, "classid", classid});
  const CommandResult r = run_command(argv);
  std::smatch m;
  static const std::regex sent("Sent ([0-9]+) bytes");
  return r.ok() && std::regex_search(r.output, m, sent) ? std::stoll(m[1].str()) : -1;
}

std::size_t namespaces_tagged(const std::string& tag) {
  const CommandResult r = run_command({find_program("ip"), "netns", "list"});
  std::size_t count = 0;
  for (std::size_t at = r.output.find(tag + "-"); at != std::string::npos; at = r.output.find(tag + "-", at + 1)) ++count;
  return count;
}

std::string dotted(std::uint32_t a) { return SocketAddress{a, 0}.ip_string(); }

// Peer 0 public, peers 1 and 2 each behind their own NAT router.
TEST(LinkEmulatorNat, NatPeersDialOutFromTheirPublicAddressAndCannotBeReached) {
  if (const std::string why = LinkEmulator::nat_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const std::string tag = "swl" + std::to_string(getpid());  // cleanup_stale's naming: leftovers are found
  std::optional<LinkEmulator> net;
  net.emplace(std::vector<EmulatedLink>{{100e6, 100e6, 0, false}, {100e6, 100e6, 0, true}, {100e6, 100e6, 0, true}}, tag);
  ASSERT_FALSE(net->behind_nat(0));
  ASSERT_TRUE(net->behind_nat(1));
  ASSERT_TRUE(net->behind_nat(2));
  EXPECT_EQ(net->local_address(0), net->address(0));
  EXPECT_NE(net->local_address(1), net->address(1));
  EXPECT_TRUE(net->router_netns(0).empty());
  EXPECT_EQ(net->router_netns(1), tag + "-r1");
  EXPECT_EQ(namespaces_tagged(tag), 5u);  // three peers, two routers

  // 1. The NAT'd peer dials the public one: its socket has the private address, and it arrives
  // masqueraded.
  {
    const Fd listener(listener_in(net->netns_path(0), 7000));
    ASSERT_GE(listener.fd, 0) << std::strerror(errno);
    const Dial d = dial_from(net->netns_path(1), {net->address(0), 7000}, 3);
    ASSERT_GE(d.fd, 0) << "peer 1 (behind NAT) could not dial peer 0: " << std::strerror(d.error);
    const Fd dialer(d.fd);
    EXPECT_EQ(dotted(local_of(dialer.fd).ip), dotted(net->local_address(1)));
    const auto accepted = accept_within(listener.fd, 3);
    ASSERT_TRUE(accepted.has_value()) << "peer 0 saw no connection";
    const Fd conn(accepted->first);
    EXPECT_EQ(dotted(accepted->second.ip), dotted(net->address(1))) << "the source must be the router's public address";

    // Data crosses the NAT, and the shaping sees the public addresses on both links: peer 1's
    // upload class toward peer 0 (1:10, by destination) and peer 0's download class from peer 1
    // (1:11, by source after masquerade) carried it, not the unclassified default.
    const std::vector<char> bytes(256 << 10, 'x');
    std::size_t sent = 0, received = 0;
    std::vector<char> buf(64 << 10);
    for (int turns = 0; received < bytes.size() && turns < 2000; ++turns) {
      if (sent < bytes.size()) {
        const ssize_t n = send(dialer.fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
        if (n > 0) sent += static_cast<std::size_t>(n);
      }
      pollfd p{conn.fd, POLLIN, 0};
      if (poll(&p, 1, 5) == 1) {
        const ssize_t n = recv(conn.fd, buf.data(), buf.size(), 0);
        if (n > 0) received += static_cast<std::size_t>(n);
      }
    }
    EXPECT_EQ(received, bytes.size());
    EXPECT_GE(class_bytes(net->netns(1), "eth0", "1:10"), static_cast<long long>(bytes.size()));
    EXPECT_GE(class_bytes("", tag + "h0", "1:11"), static_cast<long long>(bytes.size()));
  }

  // 2. Nobody reaches a listener behind NAT: neither the router's public address (nothing is
  // forwarded in, and the router drops the attempt silently) nor the private one (not routed on
  // the bridge).
  {
    const Fd hidden(listener_in(net->netns_path(1), 7001));
    ASSERT_GE(hidden.fd, 0) << std::strerror(errno);
    for (const std::size_t from : {std::size_t{0}, std::size_t{2}}) {
      for (const std::uint32_t to : {net->address(1), net->local_address(1)}) {
        const Dial d = dial_from(net->netns_path(from), {to, 7001}, 1);
        const Fd guard(d.fd);
        EXPECT_LT(d.fd, 0) << "peer " << from << " reached peer 1 (behind NAT) at " << dotted(to);
        std::printf("peer %zu -> %s:7001: %s\n", from, dotted(to).c_str(), d.fd < 0 ? std::strerror(d.error) : "connected");
      }
    }
    EXPECT_FALSE(accept_within(hidden.fd, 0).has_value()) << "a connection reached the listener behind NAT";
  }

  // 3. Teardown removes the peers' and the routers' namespaces.
  net->teardown();
  EXPECT_EQ(namespaces_tagged(tag), 0u);
  net.reset();
}

// A hole punch from both sides at once: each peer binds `port` and dials the other's public
// address and that port, again until `timeout_s`. Returns whether both ends connected.
bool punch(const std::string& netns_a, SocketAddress a_public, const std::string& netns_b, SocketAddress b_public,
           double timeout_s) {
  const auto side = [timeout_s](const std::string& netns, std::uint16_t port, SocketAddress to, bool& ok) {
    const double deadline = timeout_s * 1000;
    for (int waited = 0; waited < deadline && !ok; waited += 200) {
      const int fd = socket_in(netns);
      if (fd < 0) return;
      const int one = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
      const sockaddr_in local = SocketAddress{kAny, port}.to_sockaddr();
      const sockaddr_in sa = to.to_sockaddr();
      if (bind(fd, reinterpret_cast<const sockaddr*>(&local), sizeof local) == 0 &&
          (connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0 || errno == EINPROGRESS)) {
        pollfd p{fd, POLLOUT, 0};
        int err = 1;
        socklen_t len = sizeof err;
        if (poll(&p, 1, 200) == 1) getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        ok = err == 0;
      }
      close(fd);
      if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  bool ok_a = false, ok_b = false;
  std::thread ta([&] { side(netns_a, a_public.port, b_public, ok_a); });
  std::thread tb([&] { side(netns_b, b_public.port, a_public, ok_b); });
  ta.join();
  tb.join();
  return ok_a && ok_b;
}

// Hole punching through the emulated routers: two cone NATs (the router keeps the peer's port)
// let a simultaneous open through; with a symmetric one (a new port per connection) the other
// side dials a port nobody mapped, and the punch fails.
TEST(LinkEmulatorNat, AHolePunchWorksBetweenConeNatsAndFailsAgainstASymmetricOne) {
  if (const std::string why = LinkEmulator::nat_unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  LinkEmulator net({{100e6, 100e6, 0, false}, {100e6, 100e6, 0, true}, {100e6, 100e6, 0, true}, {100e6, 100e6, 0, true, true}},
                   "swl" + std::to_string(getpid()));
  constexpr std::uint16_t kPort = 7002;
  EXPECT_TRUE(punch(net.netns_path(1), {net.address(1), kPort}, net.netns_path(2), {net.address(2), kPort}, 3));
  EXPECT_FALSE(punch(net.netns_path(1), {net.address(1), kPort + 1}, net.netns_path(3), {net.address(3), kPort + 1}, 2));
}

// A router namespace left by a launcher that died is found and removed like a peer's.
TEST(LinkEmulatorNat, CleanupRemovesRouterNamespacesOfDeadLaunchers) {
  if (const std::string why = LinkEmulator::unavailable_reason(); !why.empty()) GTEST_SKIP() << why;
  const pid_t dead = fork();  // a pid that no process has any more
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  const std::string tag = "swl" + std::to_string(dead), ip = find_program("ip");
  ASSERT_TRUE(run_command({ip, "netns", "add", tag + "-r3"}).ok());
  LinkEmulator::cleanup_stale();
  EXPECT_EQ(namespaces_tagged(tag), 0u);
  run_command({ip, "netns", "del", tag + "-r3"});  // in case it was not
}

}  // namespace
}  // namespace swarmlab::exec
