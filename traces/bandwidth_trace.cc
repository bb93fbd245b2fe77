#include "traces/bandwidth_trace.h"

#include "core/input_error.h"
#include "core/input_limits.h"
#include "traces/csv.h"

namespace swarmlab::traces {

const BandwidthEvent* BandwidthTrace::at(std::string_view peer, double t) const {
  const BandwidthEvent* current = nullptr;
  for (const auto& e : events) {
    if (e.time_s > t) break;
    if (e.peer == peer) current = &e;
  }
  return current;
}

BandwidthTrace parse_bandwidth_trace(std::string_view text, const std::string& source,
                                     const PeerNames* known_peers) {
  const auto rows = read_csv(text, source, {"peer", "time_s", "download_bps", "upload_bps"});
  BandwidthTrace trace;
  trace.events.reserve(rows.size());
  TimeOrder order(source);
  for (const auto& row : rows) {
    BandwidthEvent e;
    e.peer = parse_peer_cell(row, 0, source, known_peers);
    e.time_s = parse_time_cell(row, 1, "time_s", source);
    e.download_bps = parse_bps_cell(row, 2, "download_bps", source);
    e.upload_bps = parse_bps_cell(row, 3, "upload_bps", source);
    order.check(e.time_s, row.line);
    trace.events.push_back(std::move(e));
  }
  return trace;
}

BandwidthTrace load_bandwidth_trace(const std::string& path, const PeerNames* known_peers) {
  return parse_bandwidth_trace(read_text_file(path, core::limits::kMaxTraceFileBytes), path, known_peers);
}

std::string to_csv(const BandwidthTrace& trace) {
  std::string out = "peer,time_s,download_bps,upload_bps\n";
  for (const auto& e : trace.events)
    out += e.peer + ',' + format_real(e.time_s) + ',' + format_real(e.download_bps) + ',' +
           format_real(e.upload_bps) + '\n';
  return out;
}

}  // namespace swarmlab::traces
