#pragma once
// Hydra's all-reduce as a collaborative peer's averager (strategy "hd", docs/hydra.md §5): the
// members of a round that send a vector run recursive halving-doubling among themselves, each its
// own replica group of one (ReplicatedAllReduce with R = 1), in the plan's exchange order (the
// roles rank them fastest first, so that the fastest take in and serve the extras). Each round gets a fresh replica: a
// Raft group of one that elects itself at once, commits every step as it is proposed and sends no
// heartbeat, and a step log that accepts the round's id, which matchmaking draws at random rather
// than in increasing order. The round's spans (AR's equal shares) do not steer the exchange: they
// are only the units in which the outcome names what was not averaged.
//
// Mapping onto the butterfly's outcome, which the peer reads:
// - unaveraged_spans: the members whose span overlaps a range this peer holds no final average
//   of (the block's reducer, or the way back from it, was lost mid-round: ReplicaOutcome::stale).
//   Outside them every survivor holds the same values, each block averaged over the contributions
//   that reached its reducer, as a butterfly reducer averages without a sender it lost; the peer
//   zeroes those spans, as it does for a butterfly round.
// - fraction_averaged: the share of the vector outside the stale ranges.
// - dropped_senders: the members this peer's exchange took steps without (lost partners).
// - the round's sender timeout is the partner timeout: a partner silent that long is dropped.
// A member that sends nothing (an auxiliary peer under AR's roles) has no part in the exchange and
// is done at once. CenteredClip is not available: the exchange never holds every contribution of
// a block side by side.
#include <cstdint>
#include <memory>
#include <set>

#include "core/allreduce/replica_peer.h"
#include "core/averaging/averager.h"
#include "core/early_messages.h"

namespace swarmlab::core::allreduce {

class HalvingDoublingAverager final : public averaging::Averager {
 public:
  // `limits` (optional, outliving this): bytes of early parts count against their sender's budget.
  explicit HalvingDoublingAverager(Environment& env, PeerLimits* limits = nullptr);
  ~HalvingDoublingAverager() override;

  // Throws std::invalid_argument on a plan with CenteredClip or a round id already started.
  void start_round(averaging::RoundPlan plan, std::span<float> values, averaging::Timeouts timeouts,
                   averaging::ButterflyRound::Done done) override;
  bool has_round(std::uint64_t round_id) const override { return started_.count(round_id) > 0; }
  ServiceId service() const override { return ServiceId::AllReduce; }

  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  std::uint64_t malformed_messages() const { return malformed_; }
  std::uint64_t dropped_messages() const { return late_ + early_.dropped(); }

 private:
  void finish(const ReplicaOutcome& outcome);
  void retire();

  Environment& env_;
  // The round in progress or last finished, and the one before, released on the next turn of the
  // event loop (its callbacks may be on the stack). A finished round still answers its partners'
  // pulls for one partner timeout, then goes: no timer of it outlives that.
  std::unique_ptr<ReplicaPeer> replica_, retired_;
  TimerHandle retire_timer_ = 0, release_timer_ = 0;
  Seconds partner_timeout_ = 0;
  EarlyMessages early_;
  std::set<std::uint64_t> started_;
  std::uint64_t current_ = 0;  // the round of replica_ (0: none)
  averaging::RoundPlan plan_;  // its plan, and the member behind each participant
  std::vector<std::size_t> member_of_participant_;
  averaging::ButterflyRound::Done done_;
  TimerHandle done_timer_ = 0;
  std::uint64_t malformed_ = 0, late_ = 0;
};

}  // namespace swarmlab::core::allreduce
