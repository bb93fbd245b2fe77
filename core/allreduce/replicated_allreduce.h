#pragma once
// One replica's side of one round of Hydra's fault-tolerant all-reduce (docs/hydra.md §5): recursive
// halving then doubling (halving_doubling.h) among P participants, each of which is a replica group
// kept consistent with Raft. P is any count: beyond the largest power of two, the extra groups are
// folded into partners first and served by them last (one-sided steps).
//
// Who does what:
// - The group's Raft leader runs the exchange: at each step it sends its chunk to the partner
//   group's leader, forwards every part of the partner's chunk it receives to its followers (the
//   replication's bandwidth cost: R - 1 copies of what it receives), reduces, and appends the step
//   to the group's log (step_log.h). It does not wait for the commit: the next step starts at once,
//   and the log trails it by about one step.
// - Followers stage the forwarded parts and reduce each step when its entry commits, so every
//   replica that holds the committed steps holds the same partial result.
// - A follower that fails goes unnoticed by the round (a majority still commits; a leader alone
//   still finishes its steps).
// - A leader that fails: the group elects another one (150-300 ms). It resumes at the first step
//   not committed: it pulls that step's chunk from the partner (which keeps what it sent), sends its
//   own again, and goes on. The partner ignores the duplicate. About one step is repeated.
// - A group whose replicas are all gone (each refused a connection or broke one) or that stays
//   silent for `partner` seconds while its partner waits is dropped by that partner for the step:
//   the chunk it would have sent is recorded as lost (ReplicaOutcome::lost_chunks) and the round
//   completes without it. Every block carries the weight behind its partial average, so what comes
//   out is the exact weighted average of the contributions that arrived, and the blocks that miss
//   some are reported; the host re-queues them with the next round.
//
// Every replica of a group starts with the group's contribution (its vector and weight).
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "core/allreduce/chunk_message.h"
#include "core/allreduce/halving_doubling.h"
#include "core/allreduce/step_log.h"
#include "core/averaging/round_plan.h"
#include "core/codec/codec.h"
#include "core/env.h"
#include "core/raft/node.h"

namespace swarmlab::core::allreduce {

struct ReplicaGroupPlan {
  std::uint64_t round_id = 1;  // > 0, and larger than every earlier round of these groups
  // P groups, each its replicas; the group's leader when the round starts first.
  std::vector<std::vector<PeerId>> groups;
  std::vector<double> weights;  // per group, > 0
  std::uint64_t length = 0;     // elements of the vector (at most 2^48)
  codec::Codec codec = codec::Codec::Fp32;
  std::uint64_t part_bytes = averaging::kDefaultPartBytes;

  std::optional<std::uint32_t> group_of(PeerId peer) const;
  std::uint64_t elements_per_part() const;
  // Throws std::invalid_argument unless the plan is self-consistent.
  void validate() const;
};

struct ReplicaTimeouts {
  // Silence of the partner group, while waiting for its chunk, that drops it. The waiting leader
  // pulls every quarter of it; a live partner answers (chunk_message.h).
  Seconds partner = 5;
  Seconds round = std::numeric_limits<double>::infinity();
};

// A chunk a group never received: the partner group was lost at that step.
struct LostChunk {
  std::uint32_t step = 0;
  std::uint32_t group = 0;          // the group that was lost
  std::uint64_t first_element = 0;  // the elements it would have sent
  std::uint64_t elements = 0;
  friend bool operator==(const LostChunk&, const LostChunk&) = default;
};

struct ElementRange {
  std::uint64_t first = 0, count = 0;
  friend bool operator==(const ElementRange&, const ElementRange&) = default;
};

struct ReplicaOutcome {
  std::uint64_t round_id = 0;
  bool completed = false;  // every step done before the round timeout
  Seconds started = 0, finished = 0;
  bool led = false;        // this replica did the last step as its group's leader
  // The step at which this replica took over as leader after its group's leader changed mid-round.
  std::optional<std::uint32_t> took_over_at;
  // Parts that arrived again for a chunk this replica already had them of: a new leader's partner
  // resending what the old one received (about one step's chunk per leader change).
  std::uint64_t duplicate_parts = 0;
  // Share of the vector whose average includes every group.
  double fraction_averaged = 0;
  // The element ranges that hold no final average (their reducer, or the way back from it, was
  // lost) but a partial one of this replica's own, in order. Outside them every surviving replica
  // holds the same values: each block's average over the contributions that reached its reducer.
  std::vector<ElementRange> stale;
  std::vector<LostChunk> lost_chunks;  // recorded by this replica's group (as its leader saw them)
  std::uint64_t rejected_messages = 0;
};

class ReplicatedAllReduce final : public Service {
 public:
  // Runs once, when every step is done (or at the round timeout); never inside a call into this
  // object from outside. It must not destroy the object synchronously.
  using Done = std::function<void(const ReplicaOutcome&)>;

  // `raft` and `log` are this peer's replica of its group (log is raft's state machine). `values`
  // holds the group's contribution (plan.length floats), or is empty for a sizes-only round; the
  // average is written into it.
  ReplicatedAllReduce(Environment& env, raft::RaftNode& raft, const StepLog& log, ReplicaGroupPlan plan,
                      std::span<float> values, ReplicaTimeouts timeouts, Done done);
  ~ReplicatedAllReduce() override;
  ReplicatedAllReduce(const ReplicatedAllReduce&) = delete;
  ReplicatedAllReduce& operator=(const ReplicatedAllReduce&) = delete;

  void start();

  // Data messages (ServiceId::AllReduce). Malformed or unexpected ones are counted and dropped.
  void handle(PeerId from, const Message& message) override;
  void on_link_failure(PeerId peer) override;

  // The host forwards these from the group's Raft node and step log.
  void on_role(raft::Role role);
  void on_raft_applied();
  void on_step_committed(const StepEntry& entry);

  bool finished() const { return finished_; }
  const ReplicaGroupPlan& plan() const { return plan_; }
  std::uint32_t group() const { return group_; }
  std::uint32_t steps_done() const { return executed_; }

 private:
  struct Incoming {  // the partner's chunk of one step, as its parts arrive
    std::vector<float> values;
    std::vector<BlockTag> tags;
    std::vector<bool> seen;
    std::uint32_t parts_seen = 0;
    bool reduced = false;  // taken into this replica's vector (later copies are duplicates)
    bool complete() const { return !seen.empty() && parts_seen == seen.size(); }
  };
  using Range = ElementRange;

  Range elements_of(BlockRange blocks) const;
  std::uint32_t parts_of(Range range) const;
  bool carries_values() const { return !values_.empty(); }
  bool in_group(std::uint32_t g, PeerId peer) const;

  void on_part(PeerId from, const DecodedChunk& chunk, const Message& message);
  void on_pull(PeerId from, const ChunkHeader& header);
  void send_control(ChunkKind kind, std::uint32_t step, PeerId to);
  void drive();
  void resume();
  void take_step(std::uint32_t step, bool partner_lost);
  void reduce(std::uint32_t step);
  // Counts a step as done here; after the merging steps this participant's own block is final.
  void advance();
  // Keeps the chunk this replica sends at `step` (the state before the step), so that it can send
  // it again to a new leader of the partner group after later steps changed the vector.
  void capture_sent(std::uint32_t step);
  void send_own(std::uint32_t step, PeerId to);
  void send_pull(std::uint32_t step);
  void forward_staged(std::uint32_t step);
  void propose(std::uint32_t step);
  void arm_partner_timer();
  void partner_lost(std::uint32_t step);
  void apply_committed_steps();
  void finish(bool completed);

  Environment& env_;
  raft::RaftNode& raft_;
  const StepLog& log_;
  ReplicaGroupPlan plan_;
  HalvingDoubling schedule_;
  std::span<float> values_;
  ReplicaTimeouts timeouts_;
  Done done_;
  std::uint32_t group_ = 0;
  std::vector<std::uint64_t> block_begin_;  // P + 1 boundaries
  std::vector<BlockTag> block_;              // what this replica holds of each block

  bool started_ = false, finished_ = false, leading_ = false;
  Seconds started_at_ = 0;
  std::uint32_t executed_ = 0;   // steps reduced into this replica's vector
  std::uint32_t committed_ = 0;  // steps of this round the log has committed
  std::vector<Incoming> incoming_;             // per step
  std::vector<bool> lost_;                     // per step: taken without the partner
  std::vector<std::optional<PeerId>> sent_to_; // per step: where this replica sent its chunk
  std::vector<std::vector<float>> sent_values_;  // per step: the chunk sent, for resending
  std::vector<bool> captured_;
  std::vector<bool> pulled_;                   // per step: pull sent since the last leader change
  std::vector<PeerId> leader_hint_;            // per group: who leads it, as last seen
  std::set<PeerId> down_;
  std::set<std::uint32_t> lost_groups_;
  std::vector<LostChunk> lost_chunks_;
  std::optional<std::uint32_t> took_over_at_;
  std::uint64_t duplicates_ = 0;
  TimerHandle partner_timer_ = 0, round_timer_ = 0, resume_timer_ = 0, done_timer_ = 0;
  std::vector<Seconds> heard_;   // per group: when it last spoke to this replica
  Seconds waiting_since_ = 0;   // when this leader began waiting at its current step
  std::uint32_t waiting_step_ = std::numeric_limits<std::uint32_t>::max();
  std::uint64_t rejected_ = 0;
  ReplicaOutcome outcome_;
};

}  // namespace swarmlab::core::allreduce
