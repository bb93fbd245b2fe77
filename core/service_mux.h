#pragma once
// Routes a peer's incoming messages to the service named by their first byte, and link failures
// to every service. Messages for unknown services, or empty ones, are counted and dropped.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/env.h"
#include "core/service_ids.h"

namespace swarmlab::core {

class ServiceMux final : public MessageSink {
 public:
  using MessageHandler = std::function<void(PeerId from, Message message)>;
  using FailureHandler = std::function<void(PeerId peer)>;

  void add(Service service, MessageHandler on_message, FailureHandler on_failure = nullptr) {
    const auto i = static_cast<std::uint8_t>(service);
    handlers_[i] = std::move(on_message);
    if (on_failure) failure_handlers_.push_back(std::move(on_failure));
  }

  void on_message(PeerId from, Message message) override {
    if (message.bytes.empty() || !handlers_[message.bytes[0]]) {
      ++dropped_;
      return;
    }
    handlers_[message.bytes[0]](from, std::move(message));
  }
  void on_link_failure(PeerId peer) override {
    for (auto& f : failure_handlers_) f(peer);
  }

  std::uint64_t dropped() const { return dropped_; }

 private:
  std::array<MessageHandler, 256> handlers_{};
  std::vector<FailureHandler> failure_handlers_;
  std::uint64_t dropped_ = 0;
};

}  // namespace swarmlab::core
