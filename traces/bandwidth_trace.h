#pragma once
// Bandwidth traces: a peer's access-link bandwidth changing over time. The CSV format is
// documented in traces/README.md:
//
//   peer,time_s,download_bps,upload_bps
//   home-3,0,100e6,20e6
//   home-3,3600,50e6,10e6
//
// Meaning: from time_s on, the peer's download and upload are the given values (bits/s) until
// its next row. Before a peer's first row, and for peers the trace never names, the values in
// the scenario apply. Times never decrease over the file.
#include <string>
#include <string_view>
#include <vector>

#include "traces/text.h"

namespace swarmlab::traces {

struct BandwidthEvent {
  std::string peer;
  double time_s = 0;
  double download_bps = 0;
  double upload_bps = 0;
  bool operator==(const BandwidthEvent&) const = default;
};

struct BandwidthTrace {
  std::vector<BandwidthEvent> events;  // ordered by time_s (non-decreasing), then file order

  bool empty() const { return events.empty(); }
  // The row in force for `peer` at time `t` (the last one at or before `t`), or nullptr when the
  // scenario's values apply. Linear in the trace length.
  const BandwidthEvent* at(std::string_view peer, double t) const;
  bool operator==(const BandwidthTrace&) const = default;
};

// Parses bandwidth CSV `text`; `source` names it in errors. When `known_peers` is given every
// peer name must be one of them. Throws core::InputError naming the source, the line and what
// was expected.
BandwidthTrace parse_bandwidth_trace(std::string_view text, const std::string& source,
                                     const PeerNames* known_peers = nullptr);
BandwidthTrace load_bandwidth_trace(const std::string& path, const PeerNames* known_peers = nullptr);

// The trace as CSV; parse_bandwidth_trace(to_csv(t)) == t exactly.
std::string to_csv(const BandwidthTrace& trace);

}  // namespace swarmlab::traces
