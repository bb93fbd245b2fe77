#include "exec/goodput_probe.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "exec/event_loop.h"
#include "exec/link_emulator.h"
#include "exec/tcp_transport.h"

namespace swarmlab::exec {
namespace {

constexpr std::uint16_t kPort = 7000;
constexpr std::size_t kMessage = 512 << 10;

struct Outcome {
  std::uint64_t bytes = 0;     // received
  double first = -1, last = -1;  // arrival of the first and the last message (shared clock)
};

// Runs in a forked child inside peer `me`'s namespace; writes an Outcome to `fd` and exits.
[[noreturn]] void run_peer_side(const LinkEmulator& net, std::size_t me, std::uint64_t per_peer, double origin,
                                const std::string& congestion_control, int fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  Outcome out;
  try {
    const int ns = open(net.netns_path(me).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) throw std::runtime_error("setns");
    const std::size_t n = net.size();
    EventLoop loop(origin);
    TcpTransport::Options o;
    o.self = static_cast<core::PeerId>(me);
    for (std::size_t i = 0; i < n; ++i) o.addresses.push_back(SocketAddress{net.address(i), kPort});
    o.network = 0x600D;
    o.connect_timeout_s = 20;
    o.congestion_control = congestion_control;
    const std::uint64_t expect = per_peer * (n - 1);
    TcpTransport t(loop, o, [&](core::PeerId, core::Message m) {
      // The first message's bytes arrived over an unknown time before it completed: not counted.
      if (out.first < 0) out.first = loop.now();
      else out.bytes += m.bytes.size();
      out.last = loop.now();
    }, nullptr);
    t.start();
    loop.run_until([] { return false; }, 0.5);  // everyone listens before anyone streams
    std::uint64_t sent = 0;
    const std::uint64_t bound = (4u << 20) * (n - 1);
    while (sent < per_peer) {
      for (std::size_t j = 0; j < n; ++j) {
        if (j == me) continue;
        core::Message m;
        m.bytes.assign(kMessage, 7);
        t.send(static_cast<core::PeerId>(j), std::move(m));
      }
      sent += kMessage;
      loop.run_until([&] { return t.queued_bytes() < bound; }, 600);
    }
    loop.run_until([&] { return t.queued_bytes() == 0 && out.bytes + kMessage >= expect; }, 600);
    loop.run_until([] { return false; }, 0.5);  // let the others finish reading
  } catch (...) {
    out = Outcome{};
  }
  [[maybe_unused]] const ssize_t w = write(fd, &out, sizeof out);
  _exit(0);
}

}  // namespace

GoodputProbe probe_goodput(double rate_bps, std::uint64_t bytes, std::size_t peers, const std::string& congestion_control) {
  if (!(rate_bps > 0) || peers < 2 || bytes / (peers - 1) < 4 * kMessage)
    throw std::invalid_argument("goodput probe: rate > 0, at least 2 peers and 2 MiB per pair");
  const std::uint64_t per_peer = bytes / (peers - 1) / kMessage * kMessage;  // to each other peer
  LinkEmulator net(std::vector<EmulatedLink>(peers, EmulatedLink{rate_bps, rate_bps, 0}), "swl" + std::to_string(getpid()));
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("goodput probe: pipe");
  const double origin = EventLoop::monotonic_seconds();
  std::vector<pid_t> children;
  for (std::size_t i = 0; i < peers; ++i) {
    const pid_t pid = fork();
    if (pid == 0) run_peer_side(net, i, per_peer, origin, congestion_control, fds[1]);
    children.push_back(pid);
  }
  close(fds[1]);
  std::vector<Outcome> outcomes(peers);
  for (auto& r : outcomes)
    if (read(fds[0], &r, sizeof r) != static_cast<ssize_t>(sizeof r)) r = Outcome{};
  close(fds[0]);
  for (pid_t p : children) waitpid(p, nullptr, 0);
  GoodputProbe probe;
  probe.rate_bps = rate_bps;
  probe.peers = peers;
  double first = 1e300, last = -1;
  std::uint64_t total = 0;
  for (const auto& r : outcomes) {
    if (r.first < 0) throw std::runtime_error("goodput probe: a peer did not complete its transfers");
    first = std::min(first, r.first);
    last = std::max(last, r.last);
    total += r.bytes;
  }
  probe.bytes = total / peers;
  probe.seconds = last - first;
  return probe;
}

}  // namespace swarmlab::exec
