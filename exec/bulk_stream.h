#pragma once
// The loopback limit a live run is compared with: one bulk TCP stream over 127.0.0.1 between two
// threads of this process, plain blocking send()/recv() of large buffers - the fastest this
// machine moves bytes through its TCP stack, with no framing, no event loop and no averaging.
#include <cstdint>

namespace swarmlab::exec {

struct BulkStreamResult {
  std::uint64_t bytes = 0;
  double seconds = 0;
  double bytes_per_s() const { return seconds > 0 ? static_cast<double>(bytes) / seconds : 0; }
};

// Throws std::runtime_error when the sockets cannot be set up.
BulkStreamResult measure_loopback_stream(std::uint64_t bytes);

}  // namespace swarmlab::exec
