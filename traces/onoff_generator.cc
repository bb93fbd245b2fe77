#include "traces/onoff_generator.h"

#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <utility>

namespace swarmlab::traces {

ChurnTrace make_on_off(const std::vector<std::string>& peers, double on_s, double off_s, double duration_s,
                       bool start_up, double phase_s) {
  if (peers.empty()) throw std::invalid_argument("on/off trace: expected at least one peer");
  PeerNames seen;
  for (const auto& p : peers) {
    if (!is_valid_peer_name(p))
      throw std::invalid_argument("on/off trace: expected peer names of " + std::string(kPeerNameRule) +
                                  ", got " + quoted(p));
    if (!seen.insert(p).second)
      throw std::invalid_argument("on/off trace: peer " + quoted(p) + " is listed twice");
  }
  for (const auto& [name, v] : std::initializer_list<std::pair<const char*, double>>{
           {"on", on_s}, {"off", off_s}, {"duration", duration_s}})
    if (!std::isfinite(v) || v <= 0)
      throw std::invalid_argument(std::string("on/off trace: expected a positive finite ") + name +
                                  " time, got " + format_real(v));
  if (!std::isfinite(phase_s))
    throw std::invalid_argument("on/off trace: expected a finite phase, got " + format_real(phase_s));

  const double period = on_s + off_s;
  const double first_len = start_up ? on_s : off_s;  // length of the cycle's first part
  double phase = std::fmod(phase_s, period);
  if (phase < 0) phase += period;
  const double cycles = std::ceil((duration_s + phase) / period) + 1;
  if (cycles * 2 * static_cast<double>(peers.size()) > static_cast<double>(kMaxOnOffEvents))
    throw std::invalid_argument("on/off trace: " + format_real(duration_s) + " s of " + format_real(period) +
                                " s cycles for " + std::to_string(peers.size()) + " peers would exceed " +
                                std::to_string(kMaxOnOffEvents) + " events");

  ChurnTrace trace;
  const auto emit = [&](double t, bool up) {
    for (const auto& p : peers) trace.events.push_back({p, t, up});
  };
  // State at time 0: the first part of the cycle while phase < first_len.
  emit(0, (phase < first_len) == start_up);
  // Cycle k starts at k*period - phase; its second part at that + first_len.
  for (double k = 0;; ++k) {
    const double start = k * period - phase;
    if (start >= duration_s) break;
    if (start > 0) emit(start, start_up);
    const double middle = start + first_len;
    if (middle >= duration_s) break;
    if (middle > 0) emit(middle, !start_up);
  }
  return trace;
}

}  // namespace swarmlab::traces
