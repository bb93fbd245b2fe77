#pragma once
// What a replica group of the all-reduce replicates through Raft (docs/hydra.md §5): the steps of
// the current round it has done. The data of each step travels outside the log (chunk_message.h);
// a step's entry is appended only after its data was sent to every follower on the same
// connection, so a member that stores the entry has the data too, and a new leader resumes from
// the first step that is not committed.
//
// Command  = varint round, varint step, u8 partner_lost (0/1)
// Result   = u8 1 when the step was taken as the next one, 0 otherwise (stale or out of order)
// Snapshot = varint round, varint steps_done
#include <cstdint>
#include <functional>
#include <span>

#include "core/raft/state_machine.h"

namespace swarmlab::core::allreduce {

struct StepEntry {
  std::uint64_t round_id = 0;
  std::uint32_t step = 0;
  bool partner_lost = false;  // the step was taken without the partner's data (its group was lost)
  friend bool operator==(const StepEntry&, const StepEntry&) = default;
};

raft::Bytes encode_step(const StepEntry& entry);
// Throws DecodeError.
StepEntry decode_step(std::span<const std::uint8_t> bytes);

class StepLog final : public raft::StateMachine {
 public:
  // Called for every entry that becomes the round's next committed step (a later round's first
  // step starts that round).
  using OnStep = std::function<void(const StepEntry&)>;
  void set_on_step(OnStep on_step) { on_step_ = std::move(on_step); }

  raft::Bytes apply(std::span<const std::uint8_t> command) override;
  raft::Bytes snapshot() const override;
  void restore(std::span<const std::uint8_t> snapshot) override;

  std::uint64_t round_id() const { return round_; }
  // Steps of round_id() committed so far.
  std::uint32_t steps_done() const { return steps_; }
  std::uint64_t ignored() const { return ignored_; }  // malformed, stale or out-of-order entries

 private:
  OnStep on_step_;
  std::uint64_t round_ = 0;
  std::uint32_t steps_ = 0;
  std::uint64_t ignored_ = 0;
};

}  // namespace swarmlab::core::allreduce
