#pragma once
// A service that only records what reaches it: messages (sender and bytes) and link failures.
#include <cstdint>
#include <utility>
#include <vector>

#include "core/service.h"

namespace swarmlab::core::testing {

struct RecordingService final : Service {
  std::vector<std::pair<PeerId, std::vector<std::uint8_t>>> got;
  std::vector<PeerId> failures;
  void handle(PeerId from, const Message& m) override { got.emplace_back(from, m.bytes); }
  void on_link_failure(PeerId p) override { failures.push_back(p); }
};

}  // namespace swarmlab::core::testing
