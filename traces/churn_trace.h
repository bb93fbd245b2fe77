#pragma once
// Churn traces: when peers go up (join, come back) and down (leave, fail). The CSV format is
// documented in traces/README.md:
//
//   peer,time_s,state
//   t4-parttime-0,0,up
//   t4-parttime-0,28800,down
//
// Meaning: each event is the state a peer enters at time_s. Before its first event a peer is in
// the opposite state (so a trace whose first event for a peer is "up" at 3600 s says that peer
// joins after one hour). Peers that never appear are up throughout. Events at equal times apply
// in file order. Times never decrease over the file.
#include <string>
#include <string_view>
#include <vector>

#include "traces/text.h"

namespace swarmlab::traces {

struct ChurnEvent {
  std::string peer;
  double time_s = 0;
  bool up = true;
  bool operator==(const ChurnEvent&) const = default;
};

struct ChurnTrace {
  std::vector<ChurnEvent> events;  // ordered by time_s (non-decreasing), then file order

  bool empty() const { return events.empty(); }
  // Whether `peer` is up at time `t` according to this trace alone (events at exactly `t` have
  // taken effect). A peer without events is up. Linear in the trace length: for lookups in a hot
  // loop, walk `events` in time order instead.
  bool is_up(std::string_view peer, double t) const;
  // Whether the trace has at least one event for `peer`.
  bool mentions(std::string_view peer) const;
  bool operator==(const ChurnTrace&) const = default;
};

// Parses churn CSV `text`; `source` names it in errors. When `known_peers` is given every peer
// name must be one of them. Throws core::InputError naming the source, the line and what was
// expected.
ChurnTrace parse_churn_trace(std::string_view text, const std::string& source,
                             const PeerNames* known_peers = nullptr);
// Reads and parses the file at `path` (errors name `path`).
ChurnTrace load_churn_trace(const std::string& path, const PeerNames* known_peers = nullptr);

// The trace as CSV in the format above; parse_churn_trace(to_csv(t)) == t exactly.
std::string to_csv(const ChurnTrace& trace);

}  // namespace swarmlab::traces
