#pragma once
// Measures this transport's goodput over emulated links (exec/link_emulator.h): `peers` peers in
// their own namespaces, every link at the same rate, and every peer streams `bytes` to every other
// peer at once as 512 KiB messages through TcpTransport - with two peers a single bulk stream,
// with more the all-to-all pattern of an averaging round (n - 1 connections sharing each upload
// and each download), without the protocol's dependencies between parts. Goodput is the payload
// each link carried per second, over its nominal rate, from the first byte received anywhere to
// the last: what `validate` needs to predict this transport (the simulator's default describes
// another stack). Needs root (LinkEmulator).
#include <cstdint>
#include <string>

namespace swarmlab::exec {

struct GoodputProbe {
  double rate_bps = 0;       // nominal rate of every link
  std::size_t peers = 2;
  std::uint64_t bytes = 0;   // payload each link carried (received by one peer)
  double seconds = 0;        // first byte received anywhere to the last
  double goodput() const { return seconds > 0 && rate_bps > 0 ? 8.0 * static_cast<double>(bytes) / seconds / rate_bps : 0; }
};

// `bytes` is what each peer sends in all (split over the others). Throws std::runtime_error when
// the links cannot be built or a peer fails.
GoodputProbe probe_goodput(double rate_bps, std::uint64_t bytes, std::size_t peers = 2,
                           const std::string& congestion_control = "cubic");

}  // namespace swarmlab::exec
