#pragma once
// One real peer process of a live averaging run (`swarmlab peer`): the core's CollaborativePeer,
// in its averaging-only form (each peer contributes a fixed batch of one, rounds back to back), on
// a LiveEnvironment. It coordinates over the DHT like any collaboration (progress records,
// leader/follower matchmaking, roles from the planner over the announced capacities): no peer is
// special, any of them may die. Each round averages a vector that is a pure function of (seed,
// round, peer) (exec/seeded_vector_learner.h), checked afterwards against the exact weighted
// average, and the peer writes one JSON line per round it took part in:
//   {"peer","round","member","sends","participants","start_s","end_s","duration_s","completed",
//    "fraction_averaged","max_abs_error","checked_elements","tolerance","values_ok","clean",
//    "dropped_senders","dropped_reducers","bytes_sent","bytes_received"}
// and a final {"peer","event":"exit",...} line with transport counters. "round" is the global step
// the round produced, minus one. Times are seconds on the run's shared monotonic timeline
// (clock_origin), so lines from different processes compare. The peer leaves after round
// `rounds - 1`.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/training/collaborative_peer.h"
#include "core/training/dht_coordinator.h"
#include "exec/live_host.h"

namespace swarmlab::exec {

struct PeerConfig {
  LiveHostConfig host;                                  // sockets, clock, timeouts
  std::string name;                                     // for logs
  // The peer and its coordination as the scenario makes them (sim/scenario/peer_setup.h: an
  // averaging-only peer and a DHT coordinator), with the run's overrides applied.
  core::training::CollaborativePeerConfig peer;
  core::training::DhtCoordinatorConfig coordination;
  std::uint64_t parameters = 0;                         // vector length
  std::uint64_t rounds = 1;
  std::uint64_t check_stride = 0;  // 0: about 2^20 positions checked per round
  // Fault injection: SIGKILL this process `die_after_s` seconds into round `die_round` (a crash:
  // its connections close), or SIGSTOP it (`die_silently`: they stay open, the others notice
  // only by their timeouts - the simulator's silent departure).
  std::optional<std::uint64_t> die_round;
  double die_after_s = 0;
  bool die_silently = false;
};

// Runs the peer until it has taken part in round rounds - 1, or gives up. Returns 0 when every
// round it took part in completed, 1 when a round timed out or no round ended for
// host.idle_timeout_s. Whether the values are right is in each round's line (values_ok): only a view
// of all members can judge a round in which someone dropped a peer. JSON lines go to `out`,
// diagnostics to `log`.
int run_peer(const PeerConfig& config, std::ostream& out, std::ostream& log);

}  // namespace swarmlab::exec
