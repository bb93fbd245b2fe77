#pragma once
// A DHT node as others know it: its Kademlia id, and the transport peer that reaches it. The two
// are separate: the id places the node in the keyspace, the peer is where messages go.
#include "core/dht/node_id.h"
#include "core/env.h"

namespace swarmlab::core::dht {

struct Contact {
  NodeId id;
  PeerId peer = 0;
  friend bool operator==(const Contact&, const Contact&) = default;
};

}  // namespace swarmlab::core::dht
