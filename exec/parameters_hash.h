#pragma once
// The fingerprint a live training peer logs after every step: equal fingerprints mean
// bit-identical parameters (the consistency check of docs/interpretations.md §25).
#include <string>
#include <vector>

namespace swarmlab::exec {

// FNV-1a (64 bits) over the bytes of the vector, as 16 hex digits.
std::string parameters_hash(const std::vector<float>& values);

}  // namespace swarmlab::exec
