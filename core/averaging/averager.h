#pragma once
// What a peer averages with: it starts its side of a round and hears when that side is done. The
// core's AveragingService runs butterfly rounds over the environment, and
// allreduce::HalvingDoublingAverager runs Hydra's halving-doubling all-reduce (strategy "hd"); a
// simulator may put a faster stand-in in front of the butterfly (sim/binding/round_replay.h) that
// replays the network time of a round it has already simulated with the same members and links.
#include <span>

#include "core/averaging/butterfly_round.h"
#include "core/averaging/round_plan.h"
#include "core/service.h"
#include "core/service_ids.h"

namespace swarmlab::core::averaging {

class Averager : public Service {
 public:
  // Starts this peer's side of a round. `values` is this peer's vector (plan.length() floats) or
  // empty for a sizes-only round; averaged values are written into it. `done` runs once, never
  // inside this call.
  virtual void start_round(RoundPlan plan, std::span<float> values, Timeouts timeouts, ButterflyRound::Done done) = 0;
  // Whether this peer started a round of this id (a round id is used once per peer).
  virtual bool has_round(std::uint64_t round_id) const = 0;
  // The service byte of the messages it exchanges (its peer's mux routes them here).
  virtual ServiceId service() const { return ServiceId::Averaging; }
};

}  // namespace swarmlab::core::averaging
