#include "cli/peer_addresses.h"

#include <sstream>
#include <stdexcept>

namespace swarmlab::cli {

std::vector<std::optional<exec::SocketAddress>> parse_peers(const std::string& text, std::size_t n, const std::string& option) {
  std::vector<std::optional<exec::SocketAddress>> out(n);
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument(option + ": \"" + item + "\" is not ID=ADDRESS");
    const std::string index = item.substr(0, eq);
    // Plain digits: std::stoul would take "-1" and wrap it around.
    if (index.empty() || index.size() > 9 || index.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(option + ": \"" + item + "\" does not start with a peer index (decimal digits)");
    const std::size_t id = std::stoul(index);
    if (id >= n) throw std::invalid_argument(option + ": peer " + std::to_string(id) + " is not in the scenario (" + std::to_string(n) + " peers)");
    if (out[id]) throw std::invalid_argument(option + ": peer " + std::to_string(id) + " is listed twice (expected one address per peer)");
    out[id] = exec::SocketAddress::parse(item.substr(eq + 1));
  }
  return out;
}


}  // namespace swarmlab::cli
