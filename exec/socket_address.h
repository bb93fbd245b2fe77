#pragma once
// An IPv4 endpoint "a.b.c.d:port", as peers are named in the static peer list of a live run.
#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace swarmlab::exec {

struct SocketAddress {
  std::uint32_t ip = 0;    // host byte order
  std::uint16_t port = 0;

  // Throws std::invalid_argument naming `text` unless it is "a.b.c.d:port" (port 0..65535).
  static SocketAddress parse(std::string_view text);
  static SocketAddress loopback(std::uint16_t port) { return {0x7F000001u, port}; }
  std::string to_string() const;
  std::string ip_string() const;
  sockaddr_in to_sockaddr() const;
  bool operator==(const SocketAddress&) const = default;
};

}  // namespace swarmlab::exec
