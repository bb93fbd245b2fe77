#pragma once
// Routes a peer's incoming messages to the service named by their first byte (core/service_ids.h),
// and link failures to every service, in the order they were added. Messages for unknown services,
// or empty ones, are counted and dropped. Given a clock, it also remembers when anything last
// arrived from each peer: a peer that keeps talking is alive, however late its answers are. Given
// the peer's limits, it drops everything from a banned peer.
// With a clock it also remembers when each peer's connection last broke: a round that starts after
// a member's connection broke learns of it from here (the round was not there to hear it).
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "core/peer_limits.h"
#include "core/service.h"
#include "core/service_ids.h"

namespace swarmlab::core {

class ServiceMux final : public Service {
 public:
  explicit ServiceMux(std::function<Seconds()> clock = nullptr) : clock_(std::move(clock)) {}

  // `service` must outlive the mux (or be removed from the environment first). One service per id.
  void add(ServiceId id, Service& service) {
    auto& slot = routes_[static_cast<std::uint8_t>(id)];
    if (slot) throw std::logic_error("service mux: id already taken");
    slot = &service;
    for (Service* s : services_)
      if (s == &service) return;
    services_.push_back(&service);
  }

  // Messages from peers `limits` has banned are dropped before any service sees them.
  void set_limits(const PeerLimits* limits) { limits_ = limits; }

  void handle(PeerId from, const Message& message) override {
    if (limits_ && limits_->banned(from)) {
      ++banned_;
      return;
    }
    if (clock_) last_heard_[from] = clock_();
    Service* s = message.bytes.empty() ? nullptr : routes_[message.bytes[0]];
    if (!s) {
      ++dropped_;
      return;
    }
    s->handle(from, message);
  }
  void on_link_failure(PeerId peer) override {
    if (clock_) last_broken_[peer] = clock_();
    for (Service* s : services_) s->on_link_failure(peer);
  }

  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t dropped_from_banned() const { return banned_; }
  // When a message last arrived from `peer`; -infinity if never (or without a clock).
  Seconds last_heard(PeerId peer) const {
    const auto it = last_heard_.find(peer);
    return it == last_heard_.end() ? -std::numeric_limits<double>::infinity() : it->second;
  }
  // When the connection to `peer` last broke; -infinity if never (or without a clock).
  Seconds last_broken(PeerId peer) const {
    const auto it = last_broken_.find(peer);
    return it == last_broken_.end() ? -std::numeric_limits<double>::infinity() : it->second;
  }

 private:
  std::array<Service*, 256> routes_{};
  std::vector<Service*> services_;  // each once, in the order added
  std::uint64_t dropped_ = 0, banned_ = 0;
  const PeerLimits* limits_ = nullptr;
  std::function<Seconds()> clock_;
  std::unordered_map<PeerId, Seconds> last_heard_;
  std::unordered_map<PeerId, Seconds> last_broken_;
};

}  // namespace swarmlab::core
