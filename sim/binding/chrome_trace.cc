#include "sim/binding/chrome_trace.h"

#include <nlohmann/json.hpp>

namespace swarmlab::sim {

void ChromeTrace::name_track(core::PeerId peer, std::string name) { track_names_.emplace_back(peer, std::move(name)); }

void ChromeTrace::span(core::PeerId peer, std::string category, std::string name, core::Seconds start,
                       core::Seconds end) {
  spans_.push_back({peer, std::move(category), std::move(name), start, end});
}

void ChromeTrace::write(std::ostream& out) const {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const auto& [peer, name] : track_names_) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", peer}, {"args", {{"name", name}}}});
  }
  for (const Span& s : spans_) {
    // Integer nanoseconds rounded to microsecond floats keep the file byte-stable.
    const double ts = static_cast<double>(static_cast<std::int64_t>(s.start * 1e9 + 0.5)) / 1e3;
    const double dur = static_cast<double>(static_cast<std::int64_t>((s.end - s.start) * 1e9 + 0.5)) / 1e3;
    events.push_back({{"name", s.name}, {"cat", s.category}, {"ph", "X"}, {"ts", ts}, {"dur", dur},
                      {"pid", 1}, {"tid", s.peer}});
  }
  nlohmann::ordered_json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ms";
  out << doc.dump() << "\n";
}

}  // namespace swarmlab::sim
