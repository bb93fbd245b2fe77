#pragma once
// A local swarm (`swarmlab launch`): one `swarmlab peer` process per scenario peer on this machine,
// supervised until the run ends, and their per-round JSON lines gathered into one result.
//
// Without link emulation the peers talk over 127.0.0.1 (ports reserved from the kernel). With it,
// each peer runs in its own network namespace behind an emulated access link
// (exec/link_emulator.h) at the scenario's rates × scale. Teardown is guaranteed: children get
// PR_SET_PDEATHSIG so they die with the launcher; the namespaces, veths and bridge are removed on
// every exit path, including exceptions and SIGINT/SIGTERM/SIGHUP (handled synchronously by the
// supervising loop, which then returns `interrupted`); leftovers of a launcher killed with SIGKILL
// are removed by the next launch (LinkEmulator::cleanup_stale). One emulated launch per process
// at a time (names carry the pid).
//
// With nat_clients, every client-mode peer sits behind its own NAT router (nftables masquerade,
// exec/link_emulator.h): it really cannot accept connections and only dials out, as the transport
// already assumes of a client-mode peer (it is given no address and binds nothing); the others see
// its connections come from the router's public address.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/averaging/strategy.h"
#include "core/codec/codec.h"
#include "core/training/round_timeouts.h"
#include "exec/launch_auth.h"
#include "exec/random_churn.h"
#include "exec/training_results.h"
#include "scenarios/scenario.h"

namespace swarmlab::exec {

struct KillSpec {
  core::PeerId peer = 0;
  std::uint64_t round = 0;
  double after_s = 0;           // into that round (the peer SIGKILLs itself)
  double restart_after_s = -1;  // >= 0: restart it with the same identity after this long
  // SIGSTOP instead of SIGKILL: its connections stay open and the others notice only by timeouts
  // (the simulator's silent departure); restarting first SIGKILLs the stopped process.
  bool silent = false;
};

// A live training run (`launch --train`, exec/train/training_peer.h): what every peer trains.
// Peer 0 is the backbone: it evaluates the test set and writes checkpoints.
struct TrainLaunch {
  std::string model = "cnn";
  std::uint64_t steps = 50;             // the run ends when the collaboration reaches this step
  std::string order = "shards";         // shards or fixed (exec::kSampleOrderNames)
  std::uint64_t target_batch = 0;       // 0: the scenario's
  std::uint64_t micro_batch = 0;        // 0: the scenario's
  std::string dpu;                      // "on", "off" or "" (the scenario's)
  double lr = 0.05;
  std::uint64_t evaluate_every = 10;    // backbone, steps (0: never, not even when leaving)
  std::uint32_t eval_samples = 2000;    // test images per evaluation during the run (0: all)
  std::uint64_t checkpoint_every = 0;   // backbone, steps; into <out>/checkpoints
  bool dump_parameters = false;         // every peer, every step; into <out>/parameters
  std::string data_dir;                 // empty: Debian's Fashion-MNIST
  double compute_scale = 1;             // each peer's emulated speed = scenario compute_sps x this
  std::int64_t kept_updates = -1;       // steps each peer keeps to replay to older states (< 0: the core's default)
};

// A peer that starts late, or a SIGKILL the launcher sends, at a time on the run's clock.
struct TimedPeerEvent {
  core::PeerId peer = 0;
  double at_s = 0;
};

struct LaunchOptions {
  std::string scenario_path;
  std::optional<core::averaging::Strategy> strategy;       // default: the scenario's
  std::uint64_t rounds = 3;
  std::optional<std::uint64_t> parameters;                 // default: the scenario's
  std::optional<core::codec::Codec> precision;             // default: the scenario's
  bool emulate_links = false;
  // emulate_links only: each client-mode peer behind its own NAT router (needs nftables).
  bool nat_clients = false;
  double scale = 1;
  double goodput = -1;                                     // < 0: kLiveGoodputFraction
  std::optional<bool> pacing;                              // default: on iff emulate_links
  double pace_all_bps = 0;                                 // test knob (PeerConfig::pace_all_bps)
  core::training::RoundTimeoutBounds timeouts;             // bounds of the peers' adaptive timeouts
  double connect_timeout_s = 5;
  double deadline_s = 900;                                 // the whole run; then everything is killed
  std::optional<KillSpec> kill;
  std::optional<TrainLaunch> train;                        // set: train (else averaging rounds)
  std::vector<TimedPeerEvent> joins;                       // these peers start at at_s, not at once
  std::vector<TimedPeerEvent> timed_kills;                 // SIGKILL at at_s; restarted after
  double timed_restart_after_s = -1;                       //   this long when >= 0
  // --train only: random kills and starts (exec/random_churn.h); the run then ends when the
  // churn and its calm are over: every peer is asked to leave once it holds the next global step
  // (SIGTERM queued with that step, the same for all; a leaving peer serves its state 5 s more).
  std::optional<RandomChurnSpec> churn;
  // > 0: each peer is given only the addresses of the first this many peers (and its own) and
  // learns the others' live (address discovery); 0: everyone's.
  std::size_t bootstrap_peers = 0;
  std::string out_dir;                                     // default: out/<scenario>-live
  std::string executable;                                  // default: this executable
  bool trace = false;                                      // per-peer timeline JSON lines
  // TCP_CONGESTION of every connection; empty: the system's. Pinned to Linux's default, cubic, so
  // runs do not depend on the machine: under bbr (some distributions' default) flows capped with
  // SO_MAX_PACING_RATE - the planner's pacing - lose up to a third of their rate (exec/README.md).
  std::string congestion_control = "cubic";
  // After the run, measure the loopback limit (exec/bulk_stream.h) with as many bytes as the
  // busiest round moved, for the throughput ratio.
  bool measure_loopback = false;
  // Allowlist authentication: the launcher is the authority (exec/launch_auth.h), files under
  // out_dir/auth/.
  std::optional<LaunchAuth> auth;
  std::function<void(const std::string&)> progress;        // one line per event, optional
};

struct LaunchRound {
  std::uint64_t round = 0;
  std::size_t participants = 0;     // plan members
  std::size_t reported = 0;         // members that finished the round (a killed one does not)
  std::size_t incomplete = 0;       // reported, but timed out
  double start_s = 0, end_s = 0;    // first member's start, last member's end (shared timeline)
  double duration_s = 0;
  double min_fraction_averaged = 1;
  double max_abs_error = 0;
  bool values_ok = true;           // every sender within the codec's tolerance (or a peer was dropped)
  bool dropped_any = false;         // some member dropped a peer (failure handling ran)
  std::uint64_t bytes_sent = 0;     // over all members
};

struct LaunchResult {
  std::string scenario, strategy, out_dir;
  double scale = 1, goodput = 0;
  bool emulated_links = false, latency_emulated = false, pacing = false;
  std::size_t peers_behind_nat = 0;  // nat_clients: the client-mode peers put behind NAT
  std::uint64_t parameters = 0;
  std::string codec;
  std::vector<LaunchRound> rounds;
  std::vector<int> exit_codes;      // last incarnation of each peer; 128 + signal when killed
  std::size_t restarts = 0;
  bool interrupted = false, timed_out = false;
  bool ok = false;                  // every peer exited 0, every round completed, values checked
  double loopback_limit_Bps = 0;    // measure_loopback: one bulk TCP stream over 127.0.0.1 (median of 3)
  std::optional<TrainingSummary> training;  // a training launch's steps and ledgers
  // Mean round time over rounds 1.. (round 0 includes connection setup and slow start), or round 0
  // when it is the only one.
  double mean_round_s() const;
};

// Throws std::invalid_argument / core::InputError for bad options or scenario, and
// std::runtime_error when the swarm cannot be set up (emulation unavailable, ports, spawn).
LaunchResult launch(const LaunchOptions& options);

// results.json of a launch.
std::string launch_result_json(const LaunchResult& result);

}  // namespace swarmlab::exec
