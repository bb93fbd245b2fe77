#pragma once
// A listening TCP socket on 127.0.0.1 at a port the kernel picks, for tests that build transports
// in one process (TcpTransport::Options::listen_fd).
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>

#include <gtest/gtest.h>

#include "exec/socket_address.h"

namespace swarmlab::exec::testing {

inline int listening_socket(std::uint16_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const sockaddr_in sa = SocketAddress::loopback(0).to_sockaddr();
  EXPECT_EQ(bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa), 0);
  EXPECT_EQ(listen(fd, 64), 0);
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port = ntohs(bound.sin_port);
  return fd;
}

}  // namespace swarmlab::exec::testing
