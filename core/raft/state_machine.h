#pragma once
// The replicated state machine a Raft group drives. Every member applies the same committed
// commands in the same order, so every member computes the same results.
#include <span>

#include "core/raft/types.h"

namespace swarmlab::core::raft {

class StateMachine {
 public:
  virtual ~StateMachine() = default;
  // Applies one committed command and returns its result. Must be deterministic and total: a
  // command is opaque bytes that may be malformed, and a malformed one must yield some result (an
  // error code) without throwing.
  virtual Bytes apply(std::span<const std::uint8_t> command) = 0;
  // The whole state, for log compaction and for followers too far behind.
  virtual Bytes snapshot() const = 0;
  // Replaces the whole state with a snapshot. Throws DecodeError on a malformed one, leaving the
  // state unchanged.
  virtual void restore(std::span<const std::uint8_t> snapshot) = 0;
};

}  // namespace swarmlab::core::raft
