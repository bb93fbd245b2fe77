#include "exec/bulk_stream.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "exec/event_loop.h"
#include "exec/socket_address.h"

namespace swarmlab::exec {
namespace {

constexpr std::size_t kChunk = 4 << 20;

[[noreturn]] void fail(const char* what) { throw std::runtime_error(std::string("loopback stream: ") + what + ": " + std::strerror(errno)); }

}  // namespace

BulkStreamResult measure_loopback_stream(std::uint64_t bytes) {
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) fail("socket");
  const sockaddr_in any = SocketAddress::loopback(0).to_sockaddr();
  if (bind(listener, reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0 || listen(listener, 1) != 0) {
    close(listener);
    fail("bind");
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &len);

  double finished = 0;
  std::thread receiver([&] {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    std::vector<char> buf(kChunk);
    std::uint64_t got = 0;
    while (got < bytes) {
      const ssize_t r = recv(fd, buf.data(), buf.size(), 0);
      if (r <= 0) break;
      got += static_cast<std::uint64_t>(r);
    }
    finished = EventLoop::monotonic_seconds();
    close(fd);
  });
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&bound), sizeof bound) != 0) {
    shutdown(listener, SHUT_RDWR);
    close(listener);
    receiver.join();
    fail("connect");
  }
  std::vector<char> buf(kChunk, 'x');
  const double start = EventLoop::monotonic_seconds();
  std::uint64_t sent = 0;
  while (sent < bytes) {
    const ssize_t w = send(fd, buf.data(), std::min<std::uint64_t>(buf.size(), bytes - sent), MSG_NOSIGNAL);
    if (w <= 0) break;
    sent += static_cast<std::uint64_t>(w);
  }
  shutdown(fd, SHUT_WR);
  receiver.join();
  close(fd);
  close(listener);
  return {sent, finished - start};
}

}  // namespace swarmlab::exec
