#pragma once
// Hosts a peer's butterfly rounds: decodes averaging messages, routes them to their round, keeps
// messages that arrive before this peer has started their round (bounded), and drops malformed,
// late or unknown ones without harm.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>

#include "core/averaging/averager.h"
#include "core/averaging/butterfly_round.h"
#include "core/early_messages.h"
#include "core/env.h"
#include "core/peer_limits.h"

namespace swarmlab::core::averaging {

class AveragingService final : public Averager {
 public:
  // `limits` (optional, outliving the service): the bytes of early messages count against their
  // sender's budget; a sender over it is banned and everything kept for it is dropped
  // (core/peer_limits.h).
  // `cost`: the processor time its rounds charge for CenteredClip (ButterflyRound; zero live).
  explicit AveragingService(Environment& env, PeerLimits* limits = nullptr, ReduceCost cost = {})
      : env_(env), cost_(cost), early_(limits) {}

  // Starts this peer's side of a round (see ButterflyRound for `values`). `done` runs once.
  void start_round(RoundPlan plan, std::span<float> values, Timeouts timeouts, ButterflyRound::Done done) override;
  bool has_round(std::uint64_t round_id) const override { return rounds_.count(round_id) || finished_.count(round_id); }

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  std::uint64_t malformed_messages() const { return malformed_; }
  std::uint64_t dropped_messages() const { return late_ + early_.dropped(); }
  std::size_t active_rounds() const { return rounds_.size(); }

 private:
  Environment& env_;
  ReduceCost cost_;
  std::map<std::uint64_t, std::unique_ptr<ButterflyRound>> rounds_;
  std::set<std::uint64_t> finished_;
  EarlyMessages early_;
  std::uint64_t malformed_ = 0;
  std::uint64_t late_ = 0;  // for rounds that are over
};

}  // namespace swarmlab::core::averaging
