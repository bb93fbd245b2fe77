#pragma once
// A listening TCP socket on 127.0.0.1 at a port the kernel picks, for tests and fuzz targets that
// build transports in one process (TcpTransport::Options::listen_fd). Throws std::system_error
// when the socket cannot be made (no gtest here: the fuzz targets use it too).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

#include "exec/socket_address.h"

namespace swarmlab::exec::testing {

inline int listening_socket(std::uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in sa = SocketAddress::loopback(0).to_sockaddr();
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, 64) != 0) {
    const int error = errno;
    if (fd >= 0) close(fd);
    throw std::system_error(error, std::generic_category(), "loopback listener");
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port = ntohs(bound.sin_port);
  return fd;
}

}  // namespace swarmlab::exec::testing
