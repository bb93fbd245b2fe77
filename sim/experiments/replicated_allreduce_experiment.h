#pragma once
// Hydra's fault-tolerant all-reduce (docs/hydra.md §5, core/allreduce/) on the simulated network,
// beside DeDLOC's butterfly all-reduce and planner on the same composition. Each of P
// participants is a group of R replicas on identical links (a Table 1-like mix: a third of the
// participants at 1 Gb/s, the rest at 200 Mb/s, 25 ms one-way, the transport's goodput); every
// replica is the core's ReplicaPeer. A round is timed with no failure, and again with one failure
// injected 30% into it: a follower replica, a group's leader, or a whole group. After the group is
// lost, one more round runs without it, its samples re-queued onto the survivors.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/codec/codec.h"
#include "sim/scenario/scenario_network.h"

namespace swarmlab::sim {

enum class ReplicaFailure { None, Follower, Leader, Group };
std::string_view name(ReplicaFailure f);

struct ReplicatedAllReduceConfig {
  std::uint32_t groups = 16;    // P (not a power of two: extras are folded in, halving_doubling.h)
  std::uint32_t replicas = 1;   // R
  std::uint64_t parameters = 25'557'032;  // ResNet-50, as in Table 1
  core::codec::Codec codec = core::codec::Codec::Fp16;
  std::string backend = "flow";
  TransportAssumptions transport;
  double fast_share = 1.0 / 3;   // participants at 1 Gb/s (Table 1's setup C: 8 of 24)
  double fast_bps = 1e9, slow_bps = 200e6, latency_s = 0.025;
  double failure_at = 0.3;       // of the round without failure
  double partner_timeout_s = 5;
  bool compare_butterfly = true; // also time butterfly AR, the planner and Moshpit on the P participants
  std::uint64_t seed = 1;
};

struct ReplicaRoundRecord {
  ReplicaFailure failure = ReplicaFailure::None;
  double round_s = 0;            // until the last surviving leader (or lone replica) finished
  double replicated_s = 0;       // until every surviving replica holds the result
  double min_fraction_averaged = 1;  // over surviving replicas
  std::optional<std::uint32_t> took_over_at;  // the step a new leader resumed at (Leader failure)
  std::uint64_t lost_chunk_bytes = 0;  // recorded as lost, to re-queue (Group failure)
  std::uint64_t bytes_sent = 0;        // by every peer during the round
  std::uint64_t replication_bytes = 0; // of those, sent inside groups (forwards and Raft)
  bool completed = true;               // every surviving replica finished
  std::uint32_t groups = 0;            // in the round
  double weight = 0;                   // samples it averages (1 per group and round)
};

struct ReplicatedAllReduceResult {
  ReplicatedAllReduceConfig config;
  double election_s = 0;                // until every group had a leader
  // None, then Follower and Leader when R >= 2 (with one replica a leader's loss is its group's), Group.
  std::vector<ReplicaRoundRecord> rounds;
  // The round after the Group failure: P - 1 groups, the lost group's samples re-queued onto them.
  std::optional<ReplicaRoundRecord> after_group_loss;
  double step_s = 0;                    // the no-failure round over its steps
  double butterfly_s = 0, planner_s = 0;  // on the P participants (0 when not compared)
  // Moshpit averaging (docs/dedloc.md §3) on the P participants: groups of at most ⌈√P⌉ on its
  // grid, all-reduce within each group, as many rounds as the grid has axes; the time of those
  // rounds, after which every participant holds the exact average when the grid is full.
  double moshpit_s = 0;
  std::uint32_t moshpit_group_size = 0, moshpit_rounds = 0;
};

// Throws std::invalid_argument on a bad configuration (P outside [2, 4096], R == 0, ...).
ReplicatedAllReduceResult run_replicated_allreduce(const ReplicatedAllReduceConfig& config);

}  // namespace swarmlab::sim
