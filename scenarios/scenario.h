#pragma once
// The scenario data model: who takes part in a collaboration (compute, bandwidth, latency,
// reachability, availability), what is trained, and how gradients are averaged. Scenarios are
// written as JSON (schema: scenarios/README.md) and read by scenarios/scenario_loader.h, which
// validates every field; a Scenario that exists is therefore consistent:
// - peer names are unique and valid (traces/text.h), and there is at least one peer;
// - every number is finite and in range (bandwidths and speeds non-negative, counts positive);
// - pair caps and ps_peer refer to existing peers; trace peer names are scenario peers;
// - at least one peer computes (compute_sps > 0) and at least one is public.
//
// Units: seconds, bits/s, samples/s, bytes (part_bytes).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/averaging/centered_clip.h"
#include "core/averaging/reduce_cost.h"
#include "core/averaging/strategy.h"
#include "core/codec/codec.h"
#include "core/names.h"
#include "core/training/mode.h"
#include "traces/bandwidth_trace.h"
#include "traces/churn_trace.h"

namespace swarmlab::scenarios {

// Client = behind NAT or a firewall: accepts no incoming connections. It aggregates only when
// relays (or hole punches) connect it to the other client peers ("nat_traversal").
enum class Reachability { Public, Client };
inline constexpr core::Named<Reachability> kReachabilityNames[] = {{Reachability::Public, "public"},
                                                                   {Reachability::Client, "client"}};

// A client peer's NAT (docs/trust.md §4): cone NATs map endpoint-independently, so a hole punch
// between two of them works; a symmetric NAT defeats it.
enum class NatType { Cone, Symmetric };
inline constexpr core::Named<NatType> kNatTypeNames[] = {{NatType::Cone, "cone"}, {NatType::Symmetric, "symmetric"}};

struct PeerSpec {
  std::string name;        // unique; a group {"name":"gpu","count":8,...} expands to gpu-0..gpu-7
  std::string group;       // the JSON entry's name (== name for an entry without "count")
  double compute_sps = 0;  // samples/s; 0 = no accelerator
  double download_bps = 0, upload_bps = 0;  // bits/s, access link
  double latency_s = 0;                     // one-way access-link latency (JSON: latency_ms, milliseconds)
  Reachability reachability = Reachability::Public;
  std::optional<double> join_s, leave_s;  // up only in [join_s, leave_s) (each bound optional)
  double failure_rate = 0;                // per-round failure probability p, in [0, 1]
  // Samples one forward/backward pass fits in the device's memory; a larger share of the batch
  // takes several passes (Hydra's distribution policy, docs/hydra.md §6). Absent: no limit.
  std::optional<std::uint64_t> max_micro_batch;
  std::optional<NatType> nat;             // client peers only; absent: drawn (NatTraversalSpec)
};

// A directed cap on the rate from peer `from` to peer `to` (docs/dedloc.md §2, t_ij), on top of the
// access links. Indices into Scenario::peers; JSON names peers or groups.
struct PairCap {
  std::size_t from = 0, to = 0;
  double bps = 0;
  bool operator==(const PairCap&) const = default;
};

struct Workload {
  std::string model;             // e.g. "resnet50"
  std::uint64_t parameters = 0;  // gradient elements averaged per step
  core::codec::Codec wire_precision = core::codec::Codec::Fp16;  // gradient encoding on the wire
  std::uint64_t target_batch = 0;  // samples per optimizer step (the global batch B)
};

struct AveragingSpec {
  core::averaging::Strategy strategy = core::averaging::Strategy::Planned;
  std::uint32_t rounds = 1;            // averaging rounds a measurement runs (Table 1: 100)
  std::uint64_t part_bytes = 524288;   // streamed part size after compression (512 KiB)
  std::optional<std::size_t> ps_peer;  // index of the parameter server (public peer), if fixed
  // Moshpit group averaging: each round averages within groups of at most this many peers along
  // one axis of the grid (docs/dedloc.md §3). Absent: one butterfly over everyone.
  std::optional<std::uint64_t> group_size;
  // Failure timeouts (docs/dedloc.md §4): the bounds of the adaptive ones (core/training/round_timeouts.h).
  std::optional<double> sender_timeout_s, reducer_timeout_s, round_timeout_s;
  // Robust aggregation (docs/trust.md §3): reducers take the CenteredClip of each part instead of
  // the weighted mean. Absent: the mean.
  std::optional<core::averaging::CenteredClip> centered_clip;
  // The processor time a simulated reducer spends on the clip (core/averaging/reduce_cost.h): by
  // default BM_ReduceCenteredClip's figures on the 2-core VM (docs/trust.md §3). Live peers spend
  // the real time instead.
  core::averaging::ReduceCost clip_cost{2.82e-9, 0.692e-9};
};

// A failure injected into an averaging run: `peer` leaves during round `round`, after it has
// delivered `after_fraction` of its messages in that round, or `at_s` seconds into the round.
// A crash closes its connections (peers notice at once); a silent departure is noticed only by
// timeouts. The peer restarts for the next round.
struct FailureSpec {
  std::size_t peer = 0;
  std::uint32_t round = 0;
  std::optional<double> after_fraction, at_s;
  bool silent = false;
};

// How peers learn the collaboration's progress and form averaging groups. Both drive the same
// peer (core/training/collaborative_peer.h). Dht: every peer publishes and reads progress records
// in the DHT and finds its group by leader/follower matchmaking. Oracle (simulator only): counts
// samples with zero staleness and forms groups instantly (sim/binding/oracle.h).
enum class Coordination { Oracle, Dht };
inline constexpr core::Named<Coordination> kCoordinationNames[] = {{Coordination::Oracle, "oracle"},
                                                                   {Coordination::Dht, "dht"}};

// How the collaboration trains (docs/dedloc.md §1, docs/opendiloco.md §1). DeDLOC: peers accumulate
// towards the global batch, then average and step (with or without delayed parameter updates).
// DiLoCo: every worker runs `local_steps` steps of `local_batch` samples, then the pseudo-gradients
// are averaged and the outer step applied.
struct TrainingSpec {
  core::training::Mode mode = core::training::Mode::Dedloc;
  Coordination coordination = Coordination::Oracle;
  bool dpu = false;                    // delayed parameter updates (DeDLOC only)
  std::uint64_t micro_batch = 16;      // samples per env.compute() call
  double duration_s = 48 * 3600.0;     // simulated wall time of a run
  // Parameters + optimizer state downloaded by a joining peer, bytes per parameter: fp32
  // parameters and two fp32 moments (Adam/LAMB) = 12.
  double state_bytes_per_parameter = 12;
  std::uint64_t state_chunk_bytes = 65536;  // hivemind streams state in 64 KiB chunks
  std::uint64_t local_steps = 1;       // DiLoCo H
  std::uint64_t local_batch = 0;       // DiLoCo samples per local step and worker
  double metrics_interval_s = 1800;    // time-series bucket
  // Hydra's compute reward (docs/hydra.md §3): the reference machine's samples/s (its bootstrap
  // server). Absent: the slowest peer that computes.
  std::optional<double> vcu_reference_sps;
};

// From "auth": every message is sealed in a signed envelope and opened by its receiver
// (docs/trust.md §1). The CPU time of sealing and opening one, per message and per payload byte;
// the defaults are BM_AuthSeal / BM_AuthOpen on the machine named in docs/trust.md.
struct AuthSpec {
  double sign_s = 19e-6, sign_s_per_byte = 1.2e-9;
  double verify_s = 52e-6, verify_s_per_byte = 1.2e-9;
};

// From "nat_traversal": how client peers reach each other (docs/trust.md §4). Without it they
// cannot, and aggregate nothing.
struct NatTraversalSpec {
  std::vector<std::size_t> relays;  // public peers that relay for client pairs (circuit relay)
  bool hole_punching = false;       // two cone NATs connect directly after a punch
  // Share of client peers whose NAT is a cone, for those without "nat": 64% of the NATs Ford,
  // Srisuresh and Kegel (2005) tested supported TCP hole punching.
  double cone_share = 0.64;
};

// A DHT-only collaboration: N peers doing puts and gets while churn replaces a share per hour.
struct DhtSpec {
  std::uint32_t peers = 0;
  double churn_per_hour = 0;
  double hours = 1;
};

struct Scenario {
  std::string name, description;
  std::string source;  // path (or name) it was loaded from
  std::uint64_t seed = 1;
  Workload workload;
  std::vector<PeerSpec> peers;     // expanded, in file order
  std::vector<PairCap> pair_caps;  // in file order; at most one cap per ordered pair
  AveragingSpec averaging;
  std::vector<FailureSpec> failures;  // from "failures"
  std::optional<DhtSpec> dht;          // from "dht": a DHT-only scenario (no workload, no peers)
  TrainingSpec training;              // from "training" (defaults when absent)
  std::optional<AuthSpec> auth;        // from "auth": allowlist authentication on
  std::optional<NatTraversalSpec> nat_traversal;  // from "nat_traversal": relays and hole punching
  traces::ChurnTrace churn;                            // from "churn_trace" (empty when absent)
  traces::BandwidthTrace bandwidth;                    // from "bandwidth_trace" (empty when absent)
  std::string churn_trace_path, bandwidth_trace_path;  // as resolved; empty when absent

  // Index of the peer called `name`, if any.
  std::optional<std::size_t> find_peer(std::string_view name) const;
  // Whether peer `i` is up at time `t`: inside [join_s, leave_s) and up in the churn trace.
  bool peer_up(std::size_t i, double t) const;
  // Peer `i`'s (download, upload) in bits/s at time `t`: the bandwidth trace's row in force, or
  // the values in its PeerSpec.
  std::pair<double, double> peer_bandwidth(std::size_t i, double t) const;
};

}  // namespace swarmlab::scenarios
