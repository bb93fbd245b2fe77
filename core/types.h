#pragma once
// The few names every part of the core shares.
#include <cstdint>

namespace swarmlab::core {

// Seconds since the start of the run (simulator) or of the run's shared clock (live mode).
using Seconds = double;

// How far short of its due time a timer may run through rounding (Environment::schedule_at): far
// above a double's step at any run length (1.5e-11 s at 28 h), far below any timeout.
constexpr Seconds kTimerSlack = 1e-9;

// Index of a peer within a collaboration. Stable for the lifetime of the run.
using PeerId = std::uint32_t;

// Handle of a pending timer or compute job; 0 is never a valid handle.
using TimerHandle = std::uint64_t;

}  // namespace swarmlab::core
