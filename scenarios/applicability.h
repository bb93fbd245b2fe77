#pragma once
// Whether a scenario fits what a command does. A DHT-only scenario (a "dht" section, no workload
// and no peers) describes the Kademlia scale experiment; only `swarmlab sim` runs it. Every other
// command needs a collaboration: "workload" and "peers" (and reads "averaging" or "training").
#include <string>

#include "core/input_error.h"
#include "scenarios/scenario.h"

namespace swarmlab::scenarios {

// Throws core::InputError(sc.source, "top level", ...) naming the command, the sections it needs
// and what the file holds instead.
inline void require_collaboration(const Scenario& sc, const std::string& command) {
  if (!sc.dht && !sc.peers.empty()) return;
  throw core::InputError(sc.source, "top level",
                         "swarmlab " + command +
                             " needs a collaboration scenario with \"workload\" and \"peers\" sections; this is a "
                             "DHT-only scenario (a \"dht\" section), which only `swarmlab sim` runs (the Kademlia scale "
                             "experiment)");
}

}  // namespace swarmlab::scenarios
