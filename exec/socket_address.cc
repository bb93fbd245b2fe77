#include "exec/socket_address.h"

#include <arpa/inet.h>

#include <charconv>
#include <stdexcept>

namespace swarmlab::exec {

SocketAddress SocketAddress::parse(std::string_view text) {
  const auto bad = [&](const char* why) {
    return std::invalid_argument("address \"" + std::string(text) + "\": " + why + " (expected a.b.c.d:port)");
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw bad("no port");
  const std::string host(text.substr(0, colon));
  in_addr a{};
  if (inet_pton(AF_INET, host.c_str(), &a) != 1) throw bad("not an IPv4 address");
  const std::string_view port = text.substr(colon + 1);
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || port.empty() || value > 65535) throw bad("bad port");
  return {ntohl(a.s_addr), static_cast<std::uint16_t>(value)};
}

std::string SocketAddress::ip_string() const {
  in_addr a{};
  a.s_addr = htonl(ip);
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

std::string SocketAddress::to_string() const { return ip_string() + ":" + std::to_string(port); }

sockaddr_in SocketAddress::to_sockaddr() const {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(ip);
  return sa;
}

}  // namespace swarmlab::exec
