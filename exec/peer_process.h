#pragma once
// One real peer process of a live averaging run (`swarmlab peer`): it hosts the core's
// AveragingService on a LiveEnvironment, takes part in the round barrier (exec/round_messages.h;
// the coordinator peer also runs exec/round_coordinator.h), averages a real vector of the
// configured size every round and writes one JSON line per round it took part in:
//   {"peer","round","member","sends","participants","start_s","end_s","duration_s","completed",
//    "fraction_averaged","max_abs_error","checked_elements","tolerance","values_ok","clean",
//    "dropped_senders","dropped_reducers","bytes_sent","bytes_received"}
// and a final {"peer","event":"exit",...} line with transport counters. Times are seconds on the
// run's shared monotonic timeline (clock_origin), so lines from different processes compare.
//
// Round flow: Ready (with this peer's role inputs) to the coordinator, repeated until a Start;
// Start names the members and their announced inputs; every member computes the same plan
// (exec/member_plan.h), fills its vector from (seed, round, peer), runs the butterfly round, checks
// its result against the exact weighted average (on a sample of positions, outside the timed
// round), and says Ready for the next round. Done ends the run.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/averaging/butterfly_round.h"
#include "core/averaging/role_assignment.h"
#include "core/codec/codec.h"
#include "exec/round_messages.h"
#include "exec/socket_address.h"

namespace swarmlab::exec {

struct PeerConfig {
  core::PeerId id = 0;
  std::string name;                                     // for logs
  std::vector<std::optional<SocketAddress>> addresses;  // every peer; nullopt = client mode
  std::optional<SocketAddress> listen;                  // bind here instead of addresses[id]
  Announce announce;                                    // this peer's role inputs
  core::averaging::Strategy strategy = core::averaging::Strategy::Planned;
  std::uint64_t rounds = 1;
  std::uint64_t parameters = 0;                         // vector length
  core::codec::Codec codec = core::codec::Codec::Fp32;
  std::uint64_t part_bytes = core::averaging::kDefaultPartBytes;
  double target_batch = 1;
  std::uint64_t seed = 1;
  core::averaging::Timeouts timeouts;
  core::PeerId coordinator = 0;
  double startup_timeout_s = 30;   // the first round waits this long for everyone
  double barrier_timeout_s = 3;    // later rounds wait this long for missing peers
  double idle_timeout_s = 120;     // give up when no Start or Done comes for this long
  double connect_timeout_s = 5;
  double ready_interval_s = 0.25;  // Ready is repeated until Start: the coordinator may not be up yet
  double clock_origin = -1;        // CLOCK_MONOTONIC seconds of the run's t = 0
  std::uint64_t network = 0;       // run identity for the handshake
  bool pacing = true;              // apply the plan's pacing (SO_MAX_PACING_RATE)
  double pace_all_bps = 0;         // > 0: pace every connection at this rate instead (test knob)
  std::uint64_t check_stride = 0;  // 0: about 2^20 positions checked per round
  // Fault injection: SIGKILL this process `die_after_s` seconds into round `die_round`.
  std::optional<std::uint64_t> die_round;
  double die_after_s = 0;
  std::string trace_path;
  std::string congestion_control;  // TCP_CONGESTION for every connection; empty: the system's
};

// Runs the peer until the run ends. Returns 0 when every round it took part in completed, 1 when
// a round timed out or the run was abandoned (the coordinator vanished). Whether the values are
// right is in each round's line (values_ok): only a view of all members can judge a round in
// which someone dropped a peer. JSON lines go to `out`, diagnostics to `log`.
int run_peer(const PeerConfig& config, std::ostream& out, std::ostream& log);

}  // namespace swarmlab::exec
