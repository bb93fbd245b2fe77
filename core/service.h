#pragma once
// What every protocol service of the core is to the world: something that takes a peer's incoming
// messages and hears when a connection breaks. The environment delivers to one Service (the peer's
// ServiceMux, or a lone service in tests), and the mux hands each message to the Service named by
// its first byte (core/service_ids.h).
#include "core/message.h"
#include "core/types.h"

namespace swarmlab::core {

class Service {
 public:
  virtual ~Service() = default;
  // A message from `from`, delivered whole and in order with respect to earlier messages from it.
  // Malformed content is the service's to count and drop: it must never throw or crash.
  virtual void handle(PeerId from, const Message& message) = 0;
  // The connection to `peer` broke; messages queued to it are lost. Not called for timeouts.
  virtual void on_link_failure(PeerId peer) = 0;
};

}  // namespace swarmlab::core
