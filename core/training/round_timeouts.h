#pragma once
// Timeouts a peer derives for itself instead of guessing (docs/dedloc.md §3, §4; the rule is
// restated in docs/interpretations.md). hivemind's users must pick them by hand: too short and
// healthy but slow peers are dropped, too long and a dead peer stalls everyone. Here they follow
// what the peer can predict and measure, and the configured values are only the bounds.
//
// Averaging: a round is planned before it starts, so its duration is predicted from the members'
// announced links (the planner's averaging rate, or the strategy's bottleneck). A member that stays
// silent for `sender_factor` predicted rounds is dropped; the round itself gives up after
// `round_factor` predicted rounds plus one sender timeout. Both stay within the bounds.
// Matchmaking: how early a peer starts looking for a group (and how long a leader keeps its group
// open) follows how long group formation took beyond the step's due time the last times, measured
// by this peer (measured from the start of the search instead, the lead fed back into itself).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/averaging/butterfly_round.h"
#include "core/types.h"

namespace swarmlab::core::training {

struct RoundTimeoutBounds {
  Seconds min_sender = 2, max_sender = 30;      // hivemind-era DeDLOC runs: 30 s
  Seconds min_round = 10, max_round = std::numeric_limits<double>::infinity();
  double sender_factor = 3;                     // sender timeout = factor x predicted round
  double round_factor = 4;                      // round timeout = factor x predicted round + sender timeout
  Seconds min_matchmaking = 1, max_matchmaking = 15;  // hivemind: 5 s; its optimizer: 15 s
  double matchmaking_factor = 3;                // lead = factor x measured formation time
  Seconds initial_matchmaking = 5;              // before anything was measured
};

class RoundTimeouts {
 public:
  explicit RoundTimeouts(RoundTimeoutBounds bounds = {}) : b_(bounds), matchmaking_(clamp_mm(bounds.initial_matchmaking)) {}

  // Timeouts for a round predicted to take `predicted_s` (non-finite or zero: the upper bounds).
  averaging::Timeouts for_round(Seconds predicted_s) const {
    averaging::Timeouts t;
    if (!(predicted_s > 0) || !std::isfinite(predicted_s)) {
      t.sender = b_.max_sender;
      t.reducer = 2 * b_.max_sender;
      t.round = b_.max_round;
      return t;
    }
    t.sender = std::clamp(b_.sender_factor * predicted_s, b_.min_sender, b_.max_sender);
    t.reducer = 2 * t.sender;  // docs/dedloc.md §4: reducer timeout = 2 x sender timeout
    t.round = std::clamp(b_.round_factor * predicted_s + t.sender, b_.min_round, b_.max_round);
    return t;
  }

  // How long before the next step this peer starts looking for a group.
  Seconds matchmaking_time() const { return matchmaking_; }
  // A group formed `took` seconds after the step was due (or after this peer started looking, when
  // it was due already): the matchmaking overhead the lead has to cover.
  void on_group_formed(Seconds took) {
    if (!(took >= 0) || !std::isfinite(took)) return;
    measured_ = measured_ < 0 ? took : 0.7 * measured_ + 0.3 * took;
    matchmaking_ = clamp_mm(b_.matchmaking_factor * measured_);
  }

  const RoundTimeoutBounds& bounds() const { return b_; }

 private:
  Seconds clamp_mm(Seconds s) const { return std::clamp(s, b_.min_matchmaking, b_.max_matchmaking); }

  RoundTimeoutBounds b_;
  Seconds matchmaking_;
  Seconds measured_ = -1;
};

}  // namespace swarmlab::core::training
