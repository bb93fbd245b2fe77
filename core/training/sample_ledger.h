#pragma once
// Where every computed sample ends up (docs/dedloc.md §1: no sample may silently vanish). A sample
// is computed when its micro-batch completes; from then on it is pending (accumulated, or
// contributed to a round still running) until it lands in an applied step or is lost with a
// departing peer.
#include <cstdint>

namespace swarmlab::core::training {

struct SampleLedger {
  std::uint64_t computed = 0;
  std::uint64_t in_steps = 0;
  std::uint64_t lost = 0;
  std::uint64_t pending = 0;

  void on_computed(std::uint64_t n) { computed += n, pending += n; }
  void on_stepped(std::uint64_t n) { in_steps += n, pending -= n; }
  void on_lost(std::uint64_t n) { lost += n, pending -= n; }
  bool balanced() const { return computed == in_steps + lost + pending; }
};

}  // namespace swarmlab::core::training
