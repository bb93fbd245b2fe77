// The live binding: exec::LiveEnvironment over exec::TcpTransport on loopback sockets. Each peer
// has its own EventLoop, as each live peer is its own process, and this thread drives them all (a
// multiplexing epoll over the loops' descriptors), so the suite's callbacks stay single-threaded.
// A crash destroys the peer's environment: its sockets close. Vanishing stops driving its loop:
// its sockets stay open and nothing answers, as with a frozen process.
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.h"
#include "exec/event_loop.h"
#include "exec/live_environment.h"

namespace swarmlab::conformance {
namespace {

int listening_socket(std::uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in sa = exec::SocketAddress::loopback(0).to_sockaddr();
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, 64) != 0)
    throw std::runtime_error(std::string("live binding: cannot listen on loopback: ") + std::strerror(errno));
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port = ntohs(bound.sin_port);
  return fd;
}

class LiveBinding final : public TestBinding {
 public:
  explicit LiveBinding(const BindingOptions& o) : origin_(exec::EventLoop::monotonic_seconds()) {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) throw std::runtime_error("live binding: epoll_create1 failed");
    std::vector<int> fds(o.peers);
    std::vector<std::optional<exec::SocketAddress>> addresses(o.peers);
    for (std::size_t i = 0; i < o.peers; ++i) {
      std::uint16_t port = 0;
      fds[i] = listening_socket(port);
      addresses[i] = exec::SocketAddress::loopback(port);
    }
    for (std::size_t i = 0; i < o.peers; ++i) {
      Peer& p = *peers_.emplace_back(std::make_unique<Peer>());
      p.loop = std::make_unique<exec::EventLoop>(origin_);
      exec::TcpTransport::Options t;
      t.self = static_cast<PeerId>(i);
      t.addresses = addresses;
      t.listen_fd = fds[i];
      t.network = 0xC0F0;
      t.accept_wait_s = 2;  // the accepting side's patience with a dialer that does not come
      t.congestion_control = "cubic";  // as the launcher pins it (exec/README.md: bbr under pacing)
      exec::LiveEnvironmentOptions e;
      e.seed = o.seed;
      e.compute_sps = o.compute_sps;
      p.env = std::make_unique<exec::LiveEnvironment>(*p.loop, t, e);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = i;
      epoll_ctl(epoll_, EPOLL_CTL_ADD, p.loop->fd(), &ev);
      p.driven = true;
    }
    for (auto& p : peers_) p->env->start();
  }

  ~LiveBinding() override {
    for (auto& p : peers_) p->env.reset();  // sockets close before any loop goes
    peers_.clear();
    close(epoll_);
  }

  std::size_t size() const override { return peers_.size(); }
  core::Environment& env(PeerId p) override {
    if (!peers_.at(p)->env) throw std::logic_error("live binding: peer " + std::to_string(p) + " crashed");
    return *peers_[p]->env;
  }
  Seconds now() const override { return exec::EventLoop::monotonic_seconds() - origin_; }

  bool run_until(const std::function<bool()>& done, Seconds deadline) override {
    for (;;) {
      for (auto& p : peers_) {
        if (!p->driven) continue;
        p->loop->poll();
        if (done()) return true;
      }
      const Seconds left = deadline - now();
      if (left <= 0) return done();
      epoll_event events[16];
      epoll_wait(epoll_, events, 16, static_cast<int>(std::ceil(std::min(left, 0.05) * 1000)));
    }
  }

  void crash(PeerId p) override {
    stop_driving(p);
    peers_.at(p)->env.reset();
  }
  void vanish(PeerId p) override { stop_driving(p); }

 private:
  struct Peer {
    std::unique_ptr<exec::EventLoop> loop;
    std::unique_ptr<exec::LiveEnvironment> env;
    bool driven = false;
  };
  void stop_driving(PeerId p) {
    Peer& peer = *peers_.at(p);
    if (!peer.driven) return;
    peer.driven = false;
    epoll_ctl(epoll_, EPOLL_CTL_DEL, peer.loop->fd(), nullptr);
  }

  double origin_;
  int epoll_ = -1;
  std::vector<std::unique_ptr<Peer>> peers_;
};

class LiveFactory final : public BindingFactory {
 public:
  std::string name() const override { return "live"; }
  // Loopback on a shared machine: timers and compute land a few ms late (allowed: 100 ms, for CI
  // running two test processes on 2 cores). SO_MAX_PACING_RATE holds
  // the rate once a connection is busy, but lets a first burst go (measured: 10 messages of 32 KiB
  // within 2 ms, about TCP's initial window of ten 64 KiB loopback segments), so the rate is
  // measured after 512 KiB; then it is within a few percent (framing included).
  Traits traits() const override { return {false, 0.1, 0.2, 512 << 10}; }
  std::unique_ptr<TestBinding> make(const BindingOptions& o) const override { return std::make_unique<LiveBinding>(o); }
};

}  // namespace

std::unique_ptr<BindingFactory> live_binding() { return std::make_unique<LiveFactory>(); }

}  // namespace swarmlab::conformance
