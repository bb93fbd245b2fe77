#pragma once
// Messages for a round this peer has not started yet. Peers start a round at slightly different
// times, so a partner's first parts can arrive before the round exists here; they are held, in
// arrival order, and handed over when it starts. Bounded: what a sender holds here counts against
// its budget (core/peer_limits.h), and beyond kMaxMessages in all the oldest are dropped.
#include <cstdint>
#include <deque>
#include <vector>

#include "core/message.h"
#include "core/peer_limits.h"

namespace swarmlab::core {

class EarlyMessages {
 public:
  static constexpr std::size_t kMaxMessages = 1 << 16;

  struct Held {
    PeerId from;
    Message message;
    std::uint64_t round_id;
  };

  // `limits` (optional, outliving this) is charged for the bytes held per sender.
  explicit EarlyMessages(PeerLimits* limits) : limits_(limits) {}
  ~EarlyMessages();
  EarlyMessages(const EarlyMessages&) = delete;
  EarlyMessages& operator=(const EarlyMessages&) = delete;

  // Holds `message` for `round_id`. A sender over its budget is banned by the limits, and
  // everything held for it is dropped with the message.
  void keep(PeerId from, const Message& message, std::uint64_t round_id);
  // Removes and returns what is held for `round_id`, in arrival order.
  std::vector<Held> take(std::uint64_t round_id);

  std::size_t size() const { return held_.size(); }
  std::uint64_t dropped() const { return dropped_; }

 private:
  void release(const Held& h);

  PeerLimits* limits_;
  std::deque<Held> held_;
  std::uint64_t dropped_ = 0;
};

}  // namespace swarmlab::core
