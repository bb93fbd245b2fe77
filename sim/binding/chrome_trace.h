#pragma once
// Collects per-peer activity spans and writes them as Chrome trace-event JSON (one track per peer),
// which Perfetto and chrome://tracing open.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/env.h"

namespace swarmlab::sim {

class ChromeTrace {
 public:
  void name_track(core::PeerId peer, std::string name);
  void span(core::PeerId peer, std::string category, std::string name, core::Seconds start, core::Seconds end);
  std::size_t size() const { return spans_.size(); }
  // Writes {"traceEvents": [...], "displayTimeUnit": "ms"}; timestamps in microseconds.
  void write(std::ostream& out) const;

 private:
  struct Span {
    core::PeerId peer;
    std::string category, name;
    core::Seconds start, end;
  };
  std::vector<Span> spans_;
  std::vector<std::pair<core::PeerId, std::string>> track_names_;
};

}  // namespace swarmlab::sim
