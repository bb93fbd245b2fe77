#include "core/averaging/averaging_service.h"

#include "core/wire.h"

namespace swarmlab::core::averaging {

void AveragingService::start_round(RoundPlan plan, std::span<float> values, Timeouts timeouts,
                                   ButterflyRound::Done done) {
  const std::uint64_t id = plan.round_id;
  if (has_round(id))
    throw std::invalid_argument("averaging: round " + std::to_string(id) + " already started on this peer");
  auto round = std::make_unique<ButterflyRound>(
      env_, std::move(plan), values, timeouts, [this, id, done = std::move(done)](const RoundOutcome& outcome) {
        finished_.insert(id);
        // The round object is still on the call stack: destroy it once control returns to the loop.
        env_.schedule(0, [this, id] { rounds_.erase(id); });
        if (done) done(outcome);
      },
      cost_);
  ButterflyRound* r = round.get();
  rounds_.emplace(id, std::move(round));
  r->start();
  // Replay what arrived before this round started, in arrival order.
  for (const auto& e : early_.take(id)) handle(e.from, e.message);
}

void AveragingService::handle(PeerId from, const Message& message) {
  DecodedPart part;
  try {
    part = decode_part(message);
  } catch (const DecodeError&) {
    ++malformed_;
    return;
  }
  const std::uint64_t id = part.header.round_id;
  if (auto it = rounds_.find(id); it != rounds_.end()) {
    it->second->on_part(from, part);
    return;
  }
  if (finished_.count(id)) {
    ++late_;
    return;
  }
  early_.keep(from, message, id);
}

void AveragingService::on_link_failure(PeerId peer) {
  // Collect first: a round may finish (and schedule its own removal) while being notified.
  std::vector<ButterflyRound*> active;
  for (auto& [id, round] : rounds_)
    if (!round->finished()) active.push_back(round.get());
  for (ButterflyRound* r : active) r->on_link_failure(peer);
}

}  // namespace swarmlab::core::averaging
