#include "core/allreduce/step_log.h"

#include "core/allreduce/chunk_message.h"
#include "core/wire.h"

namespace swarmlab::core::allreduce {

raft::Bytes encode_step(const StepEntry& e) {
  raft::Bytes out;
  Writer w(out);
  w.varint(e.round_id);
  w.varint(e.step);
  w.u8(e.partner_lost ? 1 : 0);
  return out;
}

StepEntry decode_step(std::span<const std::uint8_t> bytes) {
  Reader r(bytes);
  StepEntry e;
  e.round_id = r.varint();
  const std::uint64_t step = r.varint();
  if (step >= kMaxSteps) throw DecodeError("step out of range");
  e.step = static_cast<std::uint32_t>(step);
  const std::uint8_t lost = r.u8();
  if (lost > 1) throw DecodeError("invalid partner_lost flag");
  e.partner_lost = lost == 1;
  r.finish();
  return e;
}

raft::Bytes StepLog::apply(std::span<const std::uint8_t> command) {
  StepEntry e;
  try {
    e = decode_step(command);
  } catch (const DecodeError&) {
    ++ignored_;
    return {0};
  }
  // A new round starts at its step 0; within a round, steps come in order. Anything else is a
  // duplicate from an earlier leader (the same step proposed twice) and changes nothing.
  const bool next = (e.round_id == round_ && e.step == steps_) || (e.round_id > round_ && e.step == 0);
  if (!next) {
    ++ignored_;
    return {0};
  }
  if (e.round_id != round_) steps_ = 0;
  round_ = e.round_id;
  ++steps_;
  if (on_step_) on_step_(e);
  return {1};
}

raft::Bytes StepLog::snapshot() const {
  raft::Bytes out;
  Writer w(out);
  w.varint(round_);
  w.varint(steps_);
  return out;
}

void StepLog::restore(std::span<const std::uint8_t> snapshot) {
  Reader r(snapshot);
  const std::uint64_t round = r.varint(), steps = r.varint();
  r.finish();
  if (steps > kMaxSteps) throw DecodeError("steps out of range");
  round_ = round;
  steps_ = static_cast<std::uint32_t>(steps);
}

}  // namespace swarmlab::core::allreduce
