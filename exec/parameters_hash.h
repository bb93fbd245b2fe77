#pragma once
// The fingerprint a live training peer logs after every step: equal fingerprints mean
// bit-identical parameters (the consistency check of docs/interpretations.md §25).
#include <cstdint>
#include <string>
#include <vector>

namespace swarmlab::exec {

// FNV-1a (64 bits) over the bytes of the vector, as hex64.
std::string parameters_hash(const std::vector<float>& values);
// 16 hex digits, how the peer's logs write 64-bit names (hashes, lineages).
std::string hex64(std::uint64_t value);

}  // namespace swarmlab::exec
