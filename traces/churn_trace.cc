#include "traces/churn_trace.h"

#include "core/input_error.h"
#include "core/input_limits.h"
#include "traces/csv.h"

namespace swarmlab::traces {

bool ChurnTrace::is_up(std::string_view peer, double t) const {
  bool seen = false;
  bool state = true;
  for (const auto& e : events) {
    if (e.peer != peer) continue;
    if (e.time_s > t) {
      if (!seen) state = !e.up;  // before the first event: the opposite state
      return state;
    }
    seen = true;
    state = e.up;
  }
  return state;
}

bool ChurnTrace::mentions(std::string_view peer) const {
  for (const auto& e : events)
    if (e.peer == peer) return true;
  return false;
}

ChurnTrace parse_churn_trace(std::string_view text, const std::string& source, const PeerNames* known_peers) {
  const auto rows = read_csv(text, source, {"peer", "time_s", "state"});
  ChurnTrace trace;
  trace.events.reserve(rows.size());
  TimeOrder order(source);
  for (const auto& row : rows) {
    ChurnEvent e;
    e.peer = parse_peer_cell(row, 0, source, known_peers);
    e.time_s = parse_time_cell(row, 1, "time_s", source);
    const std::string_view state = row.cells[2];
    if (state == "up") {
      e.up = true;
    } else if (state == "down") {
      e.up = false;
    } else {
      throw core::InputError(source, line_location(row.line),
                             "column state: expected \"up\" or \"down\", got " +
                                 (state.empty() ? std::string("an empty cell") : quoted(state)));
    }
    order.check(e.time_s, row.line);
    trace.events.push_back(std::move(e));
  }
  return trace;
}

ChurnTrace load_churn_trace(const std::string& path, const PeerNames* known_peers) {
  return parse_churn_trace(read_text_file(path, core::limits::kMaxTraceFileBytes), path, known_peers);
}

std::string to_csv(const ChurnTrace& trace) {
  std::string out = "peer,time_s,state\n";
  for (const auto& e : trace.events) {
    out += e.peer;
    out += ',';
    out += format_real(e.time_s);
    out += e.up ? ",up\n" : ",down\n";
  }
  return out;
}

}  // namespace swarmlab::traces
