#include "sim/network/backend.h"

#include <stdexcept>

#include "sim/network/flow_network.h"
#include "sim/network/ns3/ns3_network.h"

namespace swarmlab::sim {

std::vector<std::string> available_backends() { return {"flow", "ns3"}; }

std::unique_ptr<Network> make_network(std::string_view backend, Engine& engine, std::vector<LinkSpec> links) {
  if (backend == "flow") return std::make_unique<FlowNetwork>(engine, std::move(links));
  if (backend == "ns3") return make_ns3_network(engine, std::move(links));
  std::string known;
  for (const auto& b : available_backends()) known += (known.empty() ? "" : ", ") + b;
  throw std::invalid_argument("unknown backend '" + std::string(backend) + "' (available: " + known + ")");
}

}  // namespace swarmlab::sim
