#pragma once
// The live round barrier's coordinator (hosted by one peer, member 0 in launched runs). It starts
// round r when every peer of the collaboration has said Ready for it. Peers still busy in the
// previous round are always waited for (the core's own timeouts bound how long they take; a busy
// peer whose connection breaks, or that stays busy past busy_timeout, no longer counts as busy).
// Once no one is busy, peers that are neither ready nor busy - dead, restarting, slow to start -
// are waited for at most startup_timeout before the first round and barrier_timeout later, and
// the round starts with whoever is ready; a restarted peer joins the next round that starts after
// its Ready. After the last round, the same barrier ends the run with Done.
//
// A Ready counts only if it is newer than the last round this coordinator gave that peer (per
// process incarnation), so a Ready that crossed a Start on the wire cannot mark a busy peer ready.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "core/env.h"
#include "exec/round_messages.h"

namespace swarmlab::exec {

class RoundCoordinator {
 public:
  struct Options {
    std::size_t peers = 0;           // ids 0..peers-1
    std::uint64_t rounds = 1;
    double startup_timeout_s = 30;
    double barrier_timeout_s = 3;
    double busy_timeout_s = 3600;
  };
  // Delivers a message to a peer (the coordinator's own peer included).
  using Deliver = std::function<void(core::PeerId to, const RoundMessage& message)>;

  RoundCoordinator(core::Environment& env, Options options, Deliver deliver);
  ~RoundCoordinator();

  void on_ready(core::PeerId from, const ReadyMsg& ready);
  // The connection to `peer` broke: if it was busy in a round, it is gone.
  void on_link_failure(core::PeerId peer);
  bool finished() const { return finished_; }
  std::uint64_t next_round() const { return next_round_; }

 private:
  void maybe_start();
  void start_now();

  core::Environment& env_;
  Options options_;
  Deliver deliver_;
  std::uint64_t next_round_ = 0;
  bool finished_ = false;
  std::map<core::PeerId, Announce> ready_;
  std::vector<bool> busy_;              // in the last started round and not yet ready again
  core::TimerHandle busy_timer_ = 0;
  std::vector<std::optional<std::uint64_t>> incarnation_;
  std::vector<std::int64_t> assigned_;  // last round started with the peer's current incarnation
  core::TimerHandle timer_ = 0;
};

}  // namespace swarmlab::exec
