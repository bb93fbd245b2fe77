#pragma once
// Random bytes from the operating system (getrandom), for what a live process must not share with
// its predecessors or peers: key seeds, and the nonce that keeps a restarted peer's random draws
// (group ids among them) from repeating the last incarnation's. The simulator never uses it.
#include <cstddef>
#include <cstdint>
#include <span>

namespace swarmlab::exec {

void fill_random(std::span<std::uint8_t> out);  // throws std::runtime_error if the OS refuses
std::uint64_t random_u64();

}  // namespace swarmlab::exec
