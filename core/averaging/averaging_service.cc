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
      });
  ButterflyRound* r = round.get();
  rounds_.emplace(id, std::move(round));
  r->start();
  // Replay what arrived before this round started, in arrival order.
  std::deque<Early> keep;
  std::deque<Early> replay;
  for (auto& e : early_) (e.round_id == id ? replay : keep).push_back(std::move(e));
  early_ = std::move(keep);
  for (const auto& e : replay) forget_early(e);
  for (auto& e : replay) handle(e.from, e.message);
}

void AveragingService::handle(PeerId from, const Message& message) {
  DecodedPart part;
  try {
    part = decode_part(message);
  } catch (const DecodeError&) {
    ++malformed_;
    return;
  }
  route(from, message, part);
}

void AveragingService::route(PeerId from, const Message& message, const DecodedPart& part) {
  const std::uint64_t id = part.header.round_id;
  if (auto it = rounds_.find(id); it != rounds_.end()) {
    it->second->on_part(from, part);
    return;
  }
  if (finished_.count(id)) {
    ++dropped_;  // late message for a round that is over
    return;
  }
  keep_early(from, message, id);
}

void AveragingService::keep_early(PeerId from, const Message& message, std::uint64_t round_id) {
  if (limits_ && !limits_->hold(from, message.bytes.size())) {
    // Over its budget (or banned): nothing more is kept for it, and what was kept goes too.
    ++dropped_;
    std::deque<Early> keep;
    for (auto& e : early_) {
      if (e.from == from) {
        forget_early(e);
        ++dropped_;
      } else {
        keep.push_back(std::move(e));
      }
    }
    early_ = std::move(keep);
    return;
  }
  if (early_.size() >= kMaxEarlyMessages) {
    forget_early(early_.front());
    early_.pop_front();
    ++dropped_;
  }
  early_.push_back(Early{from, message, round_id});
}

void AveragingService::forget_early(const Early& e) {
  if (limits_) limits_->release(e.from, e.message.bytes.size());
}

void AveragingService::on_link_failure(PeerId peer) {
  // Collect first: a round may finish (and schedule its own removal) while being notified.
  std::vector<ButterflyRound*> active;
  for (auto& [id, round] : rounds_)
    if (!round->finished()) active.push_back(round.get());
  for (ButterflyRound* r : active) r->on_link_failure(peer);
}

}  // namespace swarmlab::core::averaging
