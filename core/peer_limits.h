#pragma once
// What one remote peer may cost this peer (docs/trust.md §2): bytes its messages occupy here
// before this peer can act on them (parts for a round not started yet), and requests this peer
// serves it within a window (state and update downloads).
// A peer over the held bytes is banned for a while: everything held for it is released, and the
// service mux drops its messages until the ban ends; an honest sender stays far below.
// A request over the budget is refused, out loud and without a ban: an honest peer catching up one
// step at a time in a fast collaboration can ask more often than that, and a refusal costs a
// short reply (a silent drop left it waiting for a download that never came).
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "core/env.h"

namespace swarmlab::core {

struct PeerLimitsConfig {
  // Bytes held for one peer. An honest sender is early by at most its parts of one round, a
  // share of one vector; a collaborative peer raises this to two whole fp32 vectors of its model
  // when that is larger.
  std::uint64_t max_held_bytes = std::uint64_t{256} << 20;
  // Requests served to one peer within `request_window`; beyond it, requests are refused.
  std::uint32_t max_requests = 16;
  Seconds request_window = 60;
  Seconds ban = 300;  // how long a peer over a limit is ignored
};

class PeerLimits {
 public:
  explicit PeerLimits(Environment& env, PeerLimitsConfig config = {}) : env_(env), config_(config) {}

  bool banned(PeerId peer) const;
  // Reserves `bytes` held for `peer`. False when that takes it over the limit: it is banned, and
  // the caller drops what it was about to keep (and whatever else it holds for it, see held()).
  bool hold(PeerId peer, std::uint64_t bytes);
  void release(PeerId peer, std::uint64_t bytes);
  std::uint64_t held(PeerId peer) const;
  // Counts a request from `peer` about to be served. False when `peer` is banned, or when it is one
  // too many within the window: the caller refuses it (nothing is counted, nobody is banned).
  bool admit_request(PeerId peer);

  const PeerLimitsConfig& config() const { return config_; }
  std::uint64_t bans() const { return bans_; }
  std::uint64_t refused_requests() const { return refused_requests_; }

 private:
  struct Usage {
    std::uint64_t held = 0;
    std::deque<Seconds> requests;  // times of the requests within the window
    Seconds banned_until = -1;
  };
  void ban(PeerId peer, Usage& usage);

  Environment& env_;
  PeerLimitsConfig config_;
  std::unordered_map<PeerId, Usage> usage_;
  std::uint64_t bans_ = 0;
  std::uint64_t refused_requests_ = 0;
};

}  // namespace swarmlab::core
