#pragma once
// The hold model on ns-3's own simulator, for tests/bench/engine_bench.cc: `population` pending
// events, each of which schedules its successor at a pseudo-random delay (the same generator and
// delays the engine benchmark uses), until `events` have run. Compiled as C++17 in a library of its
// own (ns-3 3.37's headers do not compile as C++20); this header is plain C++ for both sides.
#include <cstdint>

namespace swarmlab::bench {

enum class Ns3Scheduler { Map, Heap, Calendar };

const char* ns3_scheduler_name(Ns3Scheduler scheduler);

// Runs the workload on ns3::Simulator with `scheduler` and returns the events ns-3 executed.
std::uint64_t ns3_hold(Ns3Scheduler scheduler, std::uint32_t population, std::uint64_t events);

}  // namespace swarmlab::bench
