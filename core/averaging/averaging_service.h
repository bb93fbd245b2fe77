#pragma once
// Hosts a peer's butterfly rounds: decodes averaging messages, routes them to their round, keeps
// messages that arrive before this peer has started their round (bounded), and drops malformed,
// late or unknown ones without harm.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <span>

#include "core/averaging/averager.h"
#include "core/averaging/butterfly_round.h"
#include "core/env.h"
#include "core/peer_limits.h"

namespace swarmlab::core::averaging {

class AveragingService final : public Averager {
 public:
  // Messages held for rounds this peer has not started yet; the oldest are dropped beyond this.
  static constexpr std::size_t kMaxEarlyMessages = 1 << 16;

  // `limits` (optional, outliving the service): the bytes of early messages count against their
  // sender's budget; a sender over it is banned and everything kept for it is dropped
  // (core/peer_limits.h).
  explicit AveragingService(Environment& env, PeerLimits* limits = nullptr) : env_(env), limits_(limits) {}

  // Starts this peer's side of a round (see ButterflyRound for `values`). `done` runs once.
  void start_round(RoundPlan plan, std::span<float> values, Timeouts timeouts, ButterflyRound::Done done) override;
  bool has_round(std::uint64_t round_id) const override { return rounds_.count(round_id) || finished_.count(round_id); }

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  std::uint64_t malformed_messages() const { return malformed_; }
  std::uint64_t dropped_messages() const { return dropped_; }
  std::size_t active_rounds() const { return rounds_.size(); }

 private:
  struct Early {
    PeerId from;
    Message message;
    std::uint64_t round_id;
  };
  void route(PeerId from, const Message& message, const DecodedPart& part);
  void keep_early(PeerId from, const Message& message, std::uint64_t round_id);
  void forget_early(const Early& e);

  Environment& env_;
  PeerLimits* limits_;
  std::map<std::uint64_t, std::unique_ptr<ButterflyRound>> rounds_;
  std::set<std::uint64_t> finished_;
  std::deque<Early> early_;
  std::uint64_t malformed_ = 0;
  std::uint64_t dropped_ = 0;
};

}  // namespace swarmlab::core::averaging
