#pragma once
// Chooses a network backend by name: "flow" (fluid model) or "ns3" (packet-level TCP).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.h"
#include "sim/network/network.h"

namespace swarmlab::sim {

std::vector<std::string> available_backends();
// Throws std::invalid_argument naming the available backends for an unknown name.
std::unique_ptr<Network> make_network(std::string_view backend, Engine& engine, std::vector<LinkSpec> links);

}  // namespace swarmlab::sim
