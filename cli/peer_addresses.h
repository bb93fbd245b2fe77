#pragma once
// The address book a live peer process is given on its command line (--peers, --punch).
#include <optional>
#include <string>
#include <vector>

#include "exec/socket_address.h"

namespace swarmlab::cli {

// "0=10.77.0.1:7000,1=10.77.0.2:7000,3=..." -> addresses by id; ids missing from the list (up to
// the scenario's peer count) are client-mode peers.
std::vector<std::optional<exec::SocketAddress>> parse_peers(const std::string& text, std::size_t n,
                                                             const std::string& option = "--peers");

}  // namespace swarmlab::cli

